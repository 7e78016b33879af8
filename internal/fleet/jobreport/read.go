package jobreport

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"

	"github.com/rdmabench/rdmabench/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
)

// batch is how many steps the readers take at a time; the results are
// then added in plan order, so the report does not depend on which
// reader was first.
const batch = 512

// outcome is what one step's files hold.
type outcome struct {
	file   fleet.PairFile
	failed string // why the step has no result; "" when file holds it
}

// readPairs reads the steps' result (or failure) files into r, with as
// many readers as GOMAXPROCS, and returns why each failed step failed, by
// its index. A pair's cells are summarised once its last step is read, so
// that only a batch's values are held at a time.
func readPairs(ctx context.Context, dir string, steps []fleet.Step, r *fleet.Results) (map[int]string, error) {
	last := lastOfPair(steps)
	failed := map[int]string{}
	workers := min(runtime.GOMAXPROCS(0), batch)
	parsers := make([]*fleet.PairParser, workers)
	for i := range parsers {
		parsers[i] = fleet.NewPairParser()
	}
	out := make([]outcome, batch)
	for start := 0; start < len(steps); start += batch {
		part := steps[start:min(start+batch, len(steps))]
		withConfig := r.Config == nil
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(part); i += workers {
					readStep(ctx, dir, part[i], parsers[w], withConfig, &out[i])
				}
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i, s := range part {
			o := &out[i]
			if o.failed == "" {
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
	return failed, nil
}

// readStep reads one step's result file, or its failure file.
func readStep(ctx context.Context, dir string, s fleet.Step, p *fleet.PairParser, withConfig bool, o *outcome) {
	o.failed = ""
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
func lastOfPair(steps []fleet.Step) []bool {
	last := make([]bool, len(steps))
	seen := make(map[fleet.Pair]struct{}, len(steps))
	for i := len(steps) - 1; i >= 0; i-- {
		if _, ok := seen[steps[i].Pair]; !ok {
			last[i] = true
			seen[steps[i].Pair] = struct{}{}
		}
	}
	return last
}
