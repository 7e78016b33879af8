package jobreport

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"

	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
)

// batch is about how many steps the readers take at a time (whole
// rounds); the results are then added in plan order, so the report does
// not depend on which reader was first, while the readers go on with the
// next batch.
const batch = 1024

// outcome is what one step's files hold.
type outcome struct {
	file    fleet.PairFile
	failed  string // why the step has no result; "" when file holds it
	inRound bool   // the round's file holds its results
}

// roundOutcome is one round's file, when it can be used.
type roundOutcome struct {
	file fleet.PairFile
	ok   bool
}

// readPairs reads the steps' results into r, with as many readers as
// GOMAXPROCS, and returns why each failed step failed, by its index. A
// round's results come from its round file (jobdir.WriteRound), one open
// for the round; a pair that file does not hold, or every pair when it is
// absent (a job of an older rdmafleet) or unusable, from its own files. A
// pair's cells are summarised once its last step is read, so that only a
// batch's values are held at a time.
func readPairs(ctx context.Context, dir string, plan *fleet.Plan, r *fleet.Results) (map[int]string, error) {
	last := lastOfPair(plan)
	r.Grow(len(last), len(plan.Nodes))
	failed := map[int]string{}
	workers := runtime.GOMAXPROCS(0)
	parsers := make([]*fleet.PairParser, workers)
	for i := range parsers {
		parsers[i] = fleet.NewPairParser()
	}
	own := fleet.NewPairParser() // this goroutine's, while the readers use theirs
	rounds := plan.Rounds
	index := 0 // of the first step of rounds[0]
	// Two sets of outcomes: the readers fill one while the other is added.
	type work struct {
		rounds [][]fleet.Step
		out    [][]outcome
		round  []roundOutcome
	}
	var sets [2]work
	read := func(w *work, withConfig bool) {
		for len(w.out) < len(w.rounds) {
			w.out = append(w.out, nil)
			w.round = append(w.round, roundOutcome{})
		}
		var wg sync.WaitGroup
		for k := range workers {
			wg.Go(func() {
				for i := k; i < len(w.rounds); i += workers {
					w.out[i] = readRound(ctx, dir, w.rounds[i], parsers[k], withConfig, &w.round[i], w.out[i])
				}
			})
		}
		wg.Wait()
	}
	next := func(w *work) {
		// Steps of a batch of rounds at a time, not the plan's half million.
		w.rounds = w.rounds[:0]
		for n := 0; len(rounds) > 0 && n < batch; rounds = rounds[1:] {
			round := len(plan.Rounds) - len(rounds) + 1
			steps := make([]fleet.Step, len(rounds[0]))
			for i, pair := range rounds[0] {
				steps[i] = fleet.Step{Pair: pair, Round: round, Index: index}
				index++
			}
			w.rounds = append(w.rounds, steps)
			n += len(steps)
		}
	}
	cur := &sets[0]
	next(cur)
	read(cur, true)
	for len(cur.rounds) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ahead := &sets[1]
		if cur == ahead {
			ahead = &sets[0]
		}
		next(ahead)
		done := make(chan struct{})
		withConfig := r.Config == nil
		go func() { defer close(done); read(ahead, withConfig) }()
		for i, round := range cur.rounds {
			if ro := &cur.round[i]; ro.ok {
				if err := r.Add(&ro.file); err != nil {
					ro.ok = false // not expected: its pairs were checked; read them from their files
					for j, s := range round {
						readStep(ctx, dir, s, own, r.Config == nil, &cur.out[i][j])
					}
				}
			}
			for j, s := range round {
				o := &cur.out[i][j]
				if o.failed == "" && !(o.inRound && cur.round[i].ok) {
					if err := r.Add(&o.file); err != nil {
						o.failed = "bad result file: " + cut(oneLine(err.Error()))
					}
				}
				if o.failed != "" {
					failed[s.Index] = o.failed
				}
				if last[s.Index] {
					r.Settle(s.Src, s.Dst)
				}
			}
		}
		<-done
		cur = ahead
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return failed, nil
}

// splitRounds cuts plan-ordered steps into rounds.
func splitRounds(steps []fleet.Step) [][]fleet.Step {
	var rounds [][]fleet.Step
	for start := 0; start < len(steps); {
		end := start + 1
		for end < len(steps) && steps[end].Round == steps[start].Round {
			end++
		}
		rounds = append(rounds, steps[start:end])
		start = end
	}
	return rounds
}

// readRound reads one round: its round file when that holds results of
// the round's pairs only, and the files of each pair it does not hold.
func readRound(ctx context.Context, dir string, steps []fleet.Step, p *fleet.PairParser, withConfig bool, ro *roundOutcome, out []outcome) []outcome {
	// The outcomes of an earlier batch, their values' arrays reused: a
	// fresh batch of pair files is megabytes.
	if cap(out) < len(steps) {
		out = append(out[:cap(out)], make([]outcome, len(steps)-cap(out))...)
	}
	out = out[:len(steps)]
	for j := range out {
		out[j].failed, out[j].inRound = "", false
	}
	ro.ok = false
	path := jobdir.RoundPath(dir, steps[0].Round)
	if f, err := jobdir.Open(ctx, path); err == nil {
		err = p.ParseAll(f, path, withConfig, &ro.file)
		f.Close()
		if err == nil {
			ro.ok = true
			planned := make(map[fleet.Pair]int, len(steps))
			for j, s := range steps {
				planned[s.Pair] = j
			}
			for _, pair := range ro.file.Pairs() {
				j, ok := planned[pair]
				if !ok {
					ro.ok = false // another round's pair: not this round's file
					break
				}
				out[j].inRound = true
			}
		}
	}
	for j, s := range steps {
		if !ro.ok || !out[j].inRound {
			out[j].inRound = false
			readStep(ctx, dir, s, p, withConfig, &out[j])
		}
	}
	return out
}

// readStep reads one step's result file, or its failure file.
func readStep(ctx context.Context, dir string, s fleet.Step, p *fleet.PairParser, withConfig bool, o *outcome) {
	o.failed, o.inRound = "", false
	path := jobdir.ResultPath(dir, s)
	f, err := jobdir.Open(ctx, path)
	if err == nil {
		err = p.Parse(f, path, s.Src, s.Dst, withConfig, &o.file)
		f.Close()
		if err != nil {
			o.failed = "bad result file: " + cut(oneLine(err.Error()))
		}
		return
	}
	if !errors.Is(err, os.ErrNotExist) {
		o.failed = "unreadable result file: " + cut(oneLine(err.Error()))
		return
	}
	why, err := jobdir.ReadFailed(ctx, jobdir.FailedPath(dir, s))
	switch {
	case err == nil:
		o.failed = why
	case errors.Is(err, os.ErrNotExist):
		o.failed = "no result and no failure file (still running, or the job was stopped)"
	default:
		o.failed = "bad failure file: " + cut(oneLine(err.Error()))
	}
}

// lastOfPair tells, by step index, whether a step is its pair's last in
// the plan (a plan file may measure a pair in more than one round).
func lastOfPair(plan *fleet.Plan) []bool {
	n := 0
	for _, round := range plan.Rounds {
		n += len(round)
	}
	last := make([]bool, n)
	seen := make(map[fleet.Pair]struct{}, n)
	for r := len(plan.Rounds) - 1; r >= 0; r-- {
		for i := len(plan.Rounds[r]) - 1; i >= 0; i-- {
			n--
			if p := plan.Rounds[r][i]; !isIn(seen, p) {
				last[n] = true
				seen[p] = struct{}{}
			}
		}
	}
	return last
}

func isIn(set map[fleet.Pair]struct{}, p fleet.Pair) bool {
	_, ok := set[p]
	return ok
}
