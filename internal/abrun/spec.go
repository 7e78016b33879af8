// Package abrun runs an A/B comparison of two builds of the same
// benchmarks (cmd/rdmaab is its command line) without false alarms from a
// drifting machine: as a duet, both sides' processes alive at once taking
// turns in ABBA order, where both binaries can; as interleaved runs
// otherwise; or, for two VM setups such as two kernels, as boots of their
// own in ABBA order. It writes the sides' results for benchstat and prints
// the paired verdict and the gate (internal/abtest holds the statistics).
package abrun

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/flagvar"
)

// Exit statuses of a comparison and of the gate: abtest's table (2 is the
// command's, for bad usage).
const (
	ExitRegressed = abtest.ExitRegressed // the gate found a regression
	ExitFailed    = abtest.ExitFailed    // a build or a run failed, or no gated metric was found
	ExitUndecided = abtest.ExitUndecided // the gate could not decide: too few samples or pairs
)

// A Spec is what the runner needs: two test binaries, how to run them
// and when to stop. The host driver passes it to "rdmaab run" inside the
// VM as flags (Register, Flags), so it holds only what flags can carry.
type Spec struct {
	Bins       [2]string // by abtest.Side
	Env        [2]flagvar.Strings
	Bench      string
	Benchtime  string
	Pairs      int // pairs to run; the maximum with CI
	CI         float64
	CIUnits    string
	RunTimeout time.Duration
	OutDir     string
	Dir        string   // working directory of the runs; "" for the current one
	TestArgs   []string // more test binary flags

	// The duet (duet.go): whether to run one where both binaries can,
	// the round trips of a turn, the paired test, and the gate's rule
	// that its sequential verdict applies.
	Duet bool
	ASLR bool
	THP  bool
	// Freeze stops a duet side's process (SIGSTOP) while it waits for
	// the turn, so nothing of it runs during the other's burst; Overlap
	// starts the next pair's processes while the current pair runs.
	Freeze, Overlap bool
	// Seed draws which side of each duet pair starts first (0: from the
	// clock; order.txt records the seed used).
	Seed uint64
	// BootRuns is the repetitions of each boot of a comparison of boots
	// (boots.go; rdmaab's -boot-runs).
	BootRuns int
	// Work counts instructions (rxevm -insns): the runs are interleaved,
	// as the VM's one counter counts one process at a time, and each run
	// keeps its work profiles under OutDir/work/.
	Work bool
	// WorkWarmup is the warm-up of each -work run (RDMABENCH_WARMUP),
	// where neither the environment nor -old-env/-new-env sets one.
	WorkWarmup int
	Burst      int
	Method     string
	Gate       GateSpec
}

// A GateSpec is the gate's settings, as the compare, gate and run
// commands take them.
type GateSpec struct {
	Metrics   string // units the gate judges, comma-separated
	Threshold float64
	Alpha     float64
	// WorkThresholds are the work rule's thresholds, "unit=PCT,...".
	WorkThresholds string
}

// Register defines the gate's flags.
func (g *GateSpec) Register(fs *flag.FlagSet) {
	d := abtest.DefaultThresholds
	g.Threshold = d.Threshold
	fs.StringVar(&g.Metrics, "metrics", strings.Join(d.Units, ","), "`units` the gate judges, comma-separated (as the benchmark reports them: p50-ns, ns/op, ...)")
	fs.Var(flagvar.Percent{P: &g.Threshold}, "threshold", "smallest change of a median that fails the gate, `PCT` (5% or 0.05)")
	fs.Float64Var(&g.Alpha, "alpha", d.Alpha, "chance of a false alarm for all gated time metrics together (Holm's correction), over all of a duet's looks")
	fs.StringVar(&g.WorkThresholds, "work-thresholds", formatWorkThresholds(d.WorkThresholds),
		"`unit=PCT,...`: smallest change of a work metric's median that fails the gate, with the sides' runs apart (other work units: "+
			strconv.FormatFloat(d.WorkOther*100, 'g', -1, 64)+"%)")
}

// formatWorkThresholds writes a threshold table as the flag reads it.
func formatWorkThresholds(m map[string]float64) string {
	var parts []string
	for _, u := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, u+"="+strconv.FormatFloat(m[u]*100, 'g', -1, 64)+"%")
	}
	return strings.Join(parts, ",")
}

// WorkRule returns the work rule over the work units of -metrics, or
// what is wrong with the settings. Empty WorkThresholds are the defaults.
func (g *GateSpec) WorkRule() (abtest.WorkRule, error) {
	r := abtest.DefaultThresholds.WorkRule()
	units, err := abtest.ParseUnits(g.Metrics)
	if err != nil {
		return r, fmt.Errorf("-metrics: %w", err)
	}
	r.Units, _ = abtest.SplitWork(units)
	if strings.TrimSpace(g.WorkThresholds) == "" {
		return r, nil // DefaultThresholds' table
	}
	r.Thresholds = map[string]float64{}
	for _, f := range strings.Split(g.WorkThresholds, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		u, v, ok := strings.Cut(f, "=")
		var x float64
		if ok {
			err = flagvar.Percent{P: &x}.Set(v)
		}
		if !ok || err != nil || x <= 0 || x >= 1 || !abtest.IsWorkUnit(u) {
			return r, fmt.Errorf("-work-thresholds %q: want unit=PCT of work units, like user-insns/op=0.1%%,kernel-insns/op=5%%", f)
		}
		r.Thresholds[u] = x
	}
	return r, nil
}

// Rule returns the gate's rule over the time metrics of -metrics (the
// work units go to WorkRule), or what is wrong with the settings.
func (g *GateSpec) Rule() (abtest.GateRule, error) {
	r := abtest.DefaultThresholds.GateRule()
	units, err := abtest.ParseUnits(g.Metrics)
	if err != nil {
		return r, fmt.Errorf("-metrics: %w", err)
	}
	if g.Alpha <= 0 || g.Alpha >= 1 {
		return r, fmt.Errorf("-alpha %g: want a level between 0 and 1, like 0.05", g.Alpha)
	}
	// Work units go to the work rule (WorkRule); the rest is time.
	_, r.Units = abtest.SplitWork(units)
	r.Threshold, r.Alpha = g.Threshold, g.Alpha
	if _, err := g.WorkRule(); err != nil {
		return r, err
	}
	return r, nil
}

// Register defines the flags of the spec shared by the compare command and
// the runner.
func (s *Spec) Register(fs *flag.FlagSet) {
	fs.StringVar(&s.Bench, "bench", ".", "benchmark `regexp` (go test -bench)")
	fs.StringVar(&s.Benchtime, "benchtime", "", "go test -benchtime per run, e.g. 5000x (fixed iteration counts compare best); empty: go's default")
	fs.IntVar(&s.Pairs, "count", 10, "interleaved pairs of runs: each side gets this many -count repetitions (with -ci: the most)")
	fs.Var(flagvar.Percent{P: &s.CI}, "ci", "repeat pairs until the 95% interval of every median new/old ratio of -ci-units is within ±`PCT` (e.g. 2%), at least 6 pairs and at most -count; 0: run exactly -count pairs")
	fs.StringVar(&s.CIUnits, "ci-units", strings.Join(abtest.DefaultThresholds.StopUnits, ","), "`units` the -ci stop rule watches, comma-separated")
	fs.DurationVar(&s.RunTimeout, "run-timeout", 10*time.Minute, "kill one run of a test binary after this `duration`")
	fs.Var(&s.Env[abtest.Old], "old-env", "set `KEY=VALUE` for the old side's runs only; repeatable")
	fs.Var(&s.Env[abtest.New], "new-env", "set `KEY=VALUE` for the new side's runs only; repeatable")
	fs.BoolVar(&s.Duet, "duet", true, "run both sides' processes at once, taking turns of -burst round trips (where both binaries can; otherwise interleaved runs)")
	fs.BoolVar(&s.ASLR, "aslr", true, "let the kernel randomize each process's address layout (false: the same layout for the same binary, as setarch -R)")
	fs.BoolVar(&s.THP, "thp", false, "let both sides' memory be backed by transparent huge pages (false: PR_SET_THP_DISABLE for every benchmark process; in the soft-RoCE VM, whether a process's memory landed on huge pages gave it a latency offset of its own of up to ±5-8%, which no pairing of turns cancels)")
	fs.BoolVar(&s.Freeze, "freeze", false, "stop (SIGSTOP) a duet side's process while it waits for the turn, so that none of its threads runs during the other side's burst")
	fs.BoolVar(&s.Overlap, "overlap", true, "start the next duet pair's processes while the current pair runs")
	fs.Uint64Var(&s.Seed, "seed", 0, "`seed` of the duet pairs' start order, random and balanced in blocks of two (0: from the clock; order.txt records it)")
	fs.BoolVar(&s.Work, "work", false, "count the work, instructions per operation (rxevm -insns; the runs are interleaved, the counter counting one process at a time), gate on it where -metrics names it, and diff where the work went (work-diff.txt)")
	fs.IntVar(&s.WorkWarmup, "work-warmup", defaultWorkWarmup, "with -work: round trips each run warms up with (RDMABENCH_WARMUP, unless set), enough for the first-touch paths; below the default "+strconv.Itoa(env.Default().Warmup)+" the time figures are shown, not judged")
	fs.IntVar(&s.Burst, "burst", defaultBurst, "round trips per turn in a duet")
	fs.StringVar(&s.Method, "paired", abtest.DefaultThresholds.Method.Flag(), "paired test over the duet pairs: rank (Wilcoxon signed-rank test of the log ratios), sign (sign test) or t (paired t-test)")
}

// defaultWorkWarmup is -work's warm-up. A run's time under -insns is
// mostly round trips, and on a loaded host a round trip's mean is
// milliseconds (the two spinning vCPUs seldom run at once), so the
// default 1000 warm-up round trips were most of a run. Counted work does
// not need them: the window opens after the warm-up, and in the VM runs
// of 500x at warm-ups 0, 20, 100 and 1000 counted the same
// user-insns/op (827.2); 20 keeps a few round trips of a new queue pair's
// one-time paths out of the count all the same.
const defaultWorkWarmup = 20

// defaultBurst is the round trips of a duet's turn: 200 round trips of 2 B
// take about 5 ms in the soft-RoCE VM (25 µs each), far shorter than the
// host's speed changes (hundreds of ms), and the turn's switch costs
// about 1 ms.
const defaultBurst = 200

// Flags returns the command line that Register reads back, for the runner
// inside the VM.
func (s *Spec) Flags() []string {
	a := []string{"-bench", s.Bench, "-benchtime", s.Benchtime, "-count", strconv.Itoa(s.Pairs),
		"-ci", strconv.FormatFloat(s.CI*100, 'g', -1, 64) + "%", "-ci-units", s.CIUnits,
		"-run-timeout", s.RunTimeout.String()}
	for side, env := range s.Env {
		for _, kv := range env {
			a = append(a, "-"+abtest.Side(side).String()+"-env", kv)
		}
	}
	a = append(a, "-duet="+strconv.FormatBool(s.Duet), "-aslr="+strconv.FormatBool(s.ASLR), "-thp="+strconv.FormatBool(s.THP), "-freeze="+strconv.FormatBool(s.Freeze), "-overlap="+strconv.FormatBool(s.Overlap), "-burst", strconv.Itoa(s.Burst), "-seed", strconv.FormatUint(s.Seed, 10), "-paired", s.Method,
		"-metrics", s.Gate.Metrics, "-threshold", strconv.FormatFloat(s.Gate.Threshold*100, 'g', -1, 64)+"%",
		"-alpha", strconv.FormatFloat(s.Gate.Alpha, 'g', -1, 64), "-work-thresholds", s.Gate.WorkThresholds,
		"-work="+strconv.FormatBool(s.Work), "-work-warmup", strconv.Itoa(s.WorkWarmup))
	return a
}

// SequentialRule is the duet's paired rule: the gate's alpha and
// threshold, a look after every pair of processes.
func (s *Spec) SequentialRule() abtest.SequentialRule {
	t := abtest.DefaultThresholds
	t.Method, _ = abtest.ParsePairedMethod(s.Method)
	t.Alpha, t.Threshold = s.Gate.Alpha, s.Gate.Threshold
	return t.SequentialRule(s.Pairs)
}

// stopRule is the rule the runner applies after each pair.
func (s *Spec) stopRule() (abtest.StopRule, error) {
	r := abtest.DefaultThresholds.StopRule()
	units, err := abtest.ParseUnits(s.CIUnits)
	if err != nil {
		return r, fmt.Errorf("-ci-units: %w", err)
	}
	r.Units, r.MaxPairs, r.HalfWidth = units, s.Pairs, s.CI
	if s.CI == 0 {
		r.MinPairs = s.Pairs // exactly -count pairs; the state is still reported
		r.HalfWidth = -1
	}
	return r, nil
}

// Check says what is wrong with the spec, naming the flag to change.
func (s *Spec) Check() error {
	if s.Pairs < 1 {
		return fmt.Errorf("-count %d: want at least 1 pair (10 or more for benchstat)", s.Pairs)
	}
	if s.CI < 0 || s.CI >= 1 {
		return fmt.Errorf("-ci %g%%: want a bound like 2%%, or 0 for none", s.CI*100)
	}
	if s.CI > 0 && s.Pairs < abtest.DefaultThresholds.StopMinPairs {
		return fmt.Errorf("-ci needs -count of at least %d (the fewest pairs with a finite 95%% interval)", abtest.DefaultThresholds.StopMinPairs)
	}
	if s.RunTimeout <= 0 {
		return fmt.Errorf("-run-timeout %s: want a positive duration", s.RunTimeout)
	}
	for _, env := range s.Env {
		for _, kv := range env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				return fmt.Errorf("-old-env/-new-env %q: want KEY=VALUE", kv)
			}
		}
	}
	if s.WorkWarmup < 0 {
		return fmt.Errorf("-work-warmup %d: want round trips, 0 or more (e.g. %d)", s.WorkWarmup, defaultWorkWarmup)
	}
	if s.Burst < 1 || s.Burst > 4096 {
		return fmt.Errorf("-burst %d: want round trips per turn between 1 and 4096 (e.g. %d)", s.Burst, defaultBurst)
	}
	if _, err := abtest.ParsePairedMethod(s.Method); err != nil {
		return fmt.Errorf("-paired: %w", err)
	}
	_, err := s.stopRule()
	return err
}
