package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/turn"
)

// A runSpec is what the runner needs: two test binaries, how to run them
// and when to stop. The host driver passes it to "rdmaab run" inside the
// VM as flags (runFlags, args), so it holds only what flags can carry.
type runSpec struct {
	bins       [2]string // by abtest.Side
	env        [2]multiFlag
	bench      string
	benchtime  string
	pairs      int // pairs to run; the maximum with -ci
	ci         float64
	ciUnits    string
	runTimeout time.Duration
	outDir     string
	dir        string   // working directory of the runs; "" for the current one
	testArgs   []string // more test binary flags

	// The duet (duet.go): whether to run one where both binaries can,
	// the round trips of a turn, the paired test, and the gate's rule
	// that its sequential verdict applies.
	duet bool
	aslr bool
	thp  bool
	// bootRuns is the repetitions of each boot of a comparison of boots
	// (compare.go's -boot-runs).
	bootRuns int
	burst    int
	method   string
	gate     gateFlags
}

// register defines the flags of spec shared by the compare command and the
// runner.
func (s *runSpec) register(fs *flag.FlagSet) {
	fs.StringVar(&s.bench, "bench", ".", "benchmark `regexp` (go test -bench)")
	fs.StringVar(&s.benchtime, "benchtime", "", "go test -benchtime per run, e.g. 5000x (fixed iteration counts compare best); empty: go's default")
	fs.IntVar(&s.pairs, "count", 10, "interleaved pairs of runs: each side gets this many -count repetitions (with -ci: the most)")
	fs.Var(percentFlag{&s.ci}, "ci", "repeat pairs until the 95% interval of every median new/old ratio of -ci-units is within ±`PCT` (e.g. 2%), at least 6 pairs and at most -count; 0: run exactly -count pairs")
	fs.StringVar(&s.ciUnits, "ci-units", "p50-ns", "`units` the -ci stop rule watches, comma-separated")
	fs.DurationVar(&s.runTimeout, "run-timeout", 10*time.Minute, "kill one run of a test binary after this `duration`")
	fs.Var(&s.env[abtest.Old], "old-env", "set `KEY=VALUE` for the old side's runs only; repeatable")
	fs.Var(&s.env[abtest.New], "new-env", "set `KEY=VALUE` for the new side's runs only; repeatable")
	fs.BoolVar(&s.duet, "duet", true, "run both sides' processes at once, taking turns of -burst round trips (where both binaries can; otherwise interleaved runs)")
	fs.BoolVar(&s.aslr, "aslr", true, "let the kernel randomize each process's address layout (false: the same layout for the same binary, as setarch -R)")
	fs.BoolVar(&s.thp, "thp", false, "let both sides' memory be backed by transparent huge pages (false: PR_SET_THP_DISABLE for every benchmark process; in the soft-RoCE VM, whether a process's memory landed on huge pages gave it a latency offset of its own of up to ±5-8%, which no pairing of turns cancels)")
	fs.IntVar(&s.burst, "burst", defaultBurst, "round trips per turn in a duet")
	fs.StringVar(&s.method, "paired", "rank", "paired test over the duet pairs: rank (Wilcoxon signed-rank test of the log ratios), sign (sign test) or t (paired t-test)")
}

// defaultBurst is the round trips of a duet's turn: 200 round trips of 2 B
// take about 5 ms in the soft-RoCE VM (25 µs each), far shorter than the
// host's speed changes (hundreds of ms), and the turn's switch costs
// about 1 ms (docs/compare-commits.md has the measurement).
const defaultBurst = 200

// flags returns the command line that register reads back, for the runner
// inside the VM.
func (s *runSpec) flags() []string {
	a := []string{"-bench", s.bench, "-benchtime", s.benchtime, "-count", strconv.Itoa(s.pairs),
		"-ci", strconv.FormatFloat(s.ci*100, 'g', -1, 64) + "%", "-ci-units", s.ciUnits,
		"-run-timeout", s.runTimeout.String()}
	for side, env := range s.env {
		for _, kv := range env {
			a = append(a, "-"+abtest.Side(side).String()+"-env", kv)
		}
	}
	a = append(a, "-duet="+strconv.FormatBool(s.duet), "-aslr="+strconv.FormatBool(s.aslr), "-thp="+strconv.FormatBool(s.thp), "-burst", strconv.Itoa(s.burst), "-paired", s.method,
		"-metrics", s.gate.metrics, "-threshold", strconv.FormatFloat(s.gate.threshold*100, 'g', -1, 64)+"%",
		"-alpha", strconv.FormatFloat(s.gate.alpha, 'g', -1, 64))
	return a
}

// sequentialRule is the duet's paired rule: the gate's alpha and
// threshold, a look after every pair of processes.
func (s *runSpec) sequentialRule() abtest.SequentialRule {
	r := abtest.DefaultSequentialRule
	r.Method, _ = abtest.ParsePairedMethod(s.method)
	r.Alpha, r.Threshold = s.gate.alpha, s.gate.threshold
	r.MinRounds, r.MaxLooks = minDuetPairs, max(1, s.pairs-minDuetPairs+1)
	return r
}

// stopRule is the rule the runner applies after each pair.
func (s *runSpec) stopRule() (abtest.StopRule, error) {
	r := abtest.DefaultStopRule
	units, err := abtest.ParseUnits(s.ciUnits)
	if err != nil {
		return r, fmt.Errorf("-ci-units: %w", err)
	}
	r.Units, r.MaxPairs, r.HalfWidth = units, s.pairs, s.ci
	if s.ci == 0 {
		r.MinPairs = s.pairs // exactly -count pairs; the state is still reported
		r.HalfWidth = -1
	}
	return r, nil
}

func (s *runSpec) check() error {
	if s.pairs < 1 {
		return fmt.Errorf("-count %d: want at least 1 pair (10 or more for benchstat)", s.pairs)
	}
	if s.ci < 0 || s.ci >= 1 {
		return fmt.Errorf("-ci %g%%: want a bound like 2%%, or 0 for none", s.ci*100)
	}
	if s.ci > 0 && s.pairs < abtest.DefaultStopRule.MinPairs {
		return fmt.Errorf("-ci needs -count of at least %d (the fewest pairs with a finite 95%% interval)", abtest.DefaultStopRule.MinPairs)
	}
	if s.runTimeout <= 0 {
		return fmt.Errorf("-run-timeout %s: want a positive duration", s.runTimeout)
	}
	for _, env := range s.env {
		for _, kv := range env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				return fmt.Errorf("-old-env/-new-env %q: want KEY=VALUE", kv)
			}
		}
	}
	if s.burst < 1 || s.burst > 4096 {
		return fmt.Errorf("-burst %d: want round trips per turn between 1 and 4096 (e.g. %d)", s.burst, defaultBurst)
	}
	if _, err := abtest.ParsePairedMethod(s.method); err != nil {
		return fmt.Errorf("-paired: %w", err)
	}
	_, err := s.stopRule()
	return err
}

// runSides runs the comparison: a duet when asked and both binaries can
// take turns, else interleaved runs. It writes way.txt, which says which
// ran and why.
func runSides(ctx context.Context, s *runSpec, progress io.Writer) error {
	way := "duet: both sides' processes alive at once, taking turns of " + strconv.Itoa(s.burst) + " round trips"
	duet := s.duet
	if !duet {
		way = "interleaved runs (-duet=false)"
	}
	for side := range s.bins {
		if !duet {
			break
		}
		ok, err := supportsTurns(s.bins[side])
		if err != nil {
			return err
		}
		if !ok {
			duet = false
			way = fmt.Sprintf("interleaved runs: the %s side's binary %s predates turn-taking (it lacks %s)", abtest.Side(side), s.bins[side], turn.Version)
		}
	}
	if !s.thp {
		// Set on this process, inherited by every benchmark process it
		// starts (fork keeps the flag, exec too).
		if err := disableTHP(); err != nil {
			return fmt.Errorf("-thp=false: %w (give -thp to run with huge pages)", err)
		}
		way += "; transparent huge pages off for both sides"
	}
	if err := os.MkdirAll(s.outDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.outDir, "way.txt"), []byte(way+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "rdmaab: %s\n", way)
	if duet {
		return runDuet(ctx, s, progress)
	}
	_, err := runInterleaved(ctx, s, progress)
	return err
}

// sideFile is where a side's benchmark output accumulates.
func sideFile(dir string, side abtest.Side) string { return filepath.Join(dir, side.String()+".txt") }

// runInterleaved runs the two binaries in alternating pairs, appends each
// run's standard output to old.txt or new.txt and its standard error to
// old.log or new.log under s.outDir, records the order in order.txt, and
// stops by s's rule. It returns the stop state; stop.txt says it too.
func runInterleaved(ctx context.Context, s *runSpec, progress io.Writer) (abtest.StopState, error) {
	rule, err := s.stopRule()
	if err != nil {
		return abtest.StopState{}, err
	}
	if err := os.MkdirAll(s.outDir, 0o755); err != nil {
		return abtest.StopState{}, err
	}
	var files [2]*os.File
	for _, side := range []abtest.Side{abtest.Old, abtest.New} {
		// Truncate: a file holds one comparison.
		f, err := os.Create(sideFile(s.outDir, side))
		if err != nil {
			return abtest.StopState{}, err
		}
		defer f.Close()
		files[side] = f
	}
	order, err := os.Create(filepath.Join(s.outDir, "order.txt"))
	if err != nil {
		return abtest.StopState{}, err
	}
	defer order.Close()

	var pairs []abtest.Pair
	var st abtest.StopState
	for i := 0; !st.Done; i++ {
		var p abtest.Pair
		for _, side := range abtest.Order(i) {
			start := time.Now()
			out, err := runOnce(ctx, s, side)
			fmt.Fprintf(order, "pair %d %s\n", i+1, side)
			if err != nil {
				return st, fmt.Errorf("pair %d, %s side: %w", i+1, side, err)
			}
			if _, err := files[side].Write(out.stdout); err != nil {
				return st, err
			}
			appendFile(filepath.Join(s.outDir, side.String()+".log"), out.stderr)
			rs, err := abtest.ReadResults(bytes.NewReader(out.stdout), s.bins[side])
			if err != nil {
				return st, fmt.Errorf("pair %d, %s side: %w", i+1, side, err)
			}
			if len(rs.Keys) == 0 {
				return st, fmt.Errorf("pair %d, %s side: %s ran no benchmark matching -bench %q%s", i+1, side, s.bins[side], s.bench, tailOf(out.stdout))
			}
			if side == abtest.Old {
				p.Old = rs
			} else {
				p.New = rs
			}
			fmt.Fprintf(progress, "rdmaab: pair %d/%d: %s ran in %.1f s\n", i+1, s.pairs, side, time.Since(start).Seconds())
		}
		pairs = append(pairs, p)
		st = rule.Check(pairs)
		if s.ci > 0 {
			fmt.Fprintf(progress, "rdmaab: %s\n", st)
		}
	}
	msg := st.String()
	if s.ci == 0 {
		msg = fmt.Sprintf("ran the %d pairs asked for (-count %d); %s", st.Pairs, s.pairs, widest(st))
	}
	if err := os.WriteFile(filepath.Join(s.outDir, "stop.txt"), []byte(msg+"\n"), 0o644); err != nil {
		return st, err
	}
	return st, nil
}

func widest(st abtest.StopState) string {
	if st.Widest == nil {
		return "no result on both sides for the paired ratios"
	}
	return "widest paired interval " + st.Widest.String()
}

// runOutput is one run's output.
type runOutput struct {
	stdout, stderr []byte
}

// runOnce runs one side's binary for one repetition of every benchmark.
func runOnce(ctx context.Context, s *runSpec, side abtest.Side) (runOutput, error) {
	args := runArgs(s)
	ctx, cancel := context.WithTimeout(ctx, s.runTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bins[side], args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), s.env[side]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := runOutput{stdout.Bytes(), stderr.Bytes()}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return out, fmt.Errorf("%s: killed after %s (-run-timeout)%s", s.bins[side], s.runTimeout+30*time.Second, tailOf(append(out.stdout, out.stderr...)))
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w%s", s.bins[side], err, tailOf(append(out.stdout, out.stderr...)))
	}
	return out, nil
}

// appendFile appends b to the file name, if there is anything to append.
func appendFile(name string, b []byte) {
	if len(b) == 0 {
		return
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	f.Write(b)
	f.Close()
}

// tailOf returns the last lines of a program's output to quote in an
// error, or "" when there is none.
func tailOf(out []byte) string {
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return ""
	}
	lines := bytes.Split(out, []byte("\n"))
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "; output ends:\n\t" + string(bytes.Join(lines, []byte("\n\t")))
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// percentFlag reads "5%" or "0.05" into a fraction.
type percentFlag struct{ p *float64 }

func (f percentFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p*100, 'g', -1, 64) + "%"
}

func (f percentFlag) Set(s string) error {
	v, err := parsePercent(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

// parsePercent reads "5%" as 0.05 and a bare "0.05" as 0.05.
func parsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q: want a percentage like 5%%", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}
