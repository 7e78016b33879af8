// Command rdmaab compares two builds of the same benchmarks without false
// alarms from a drifting machine. Where both test binaries can take turns
// (they link rdmalat's turn-taking), it runs them as a duet: a pair of
// processes, one per side, alive at once, taking turns of -burst round
// trips in ABBA order, up to -count pairs, judged pair by pair (the paired
// verdict, docs/compare-commits.md). Otherwise it runs them interleaved,
// old and new in alternating pairs (old,new then new,old ...), one -count
// repetition per run. Either way in one boot of the soft-RoCE VM (or
// directly on a node with an RDMA device); it prints benchstat's table,
// the median per-pair ratio with its interval, and a regression verdict.
//
//	rdmaab [flags] OLD NEW [-- test binary flags]
//	rdmaab gate [flags] old.txt new.txt
//
// OLD and NEW are each a git revision (checked out in a temporary git
// worktree, removed afterwards, and built with go test -c at the same path
// inside the repository as the current directory, plus -pkg), a directory
// (a working tree: its -pkg is built) or a test binary. -pkg names the
// package, so the benchmarks of any package and of any module compare:
//
//	rdmaab -bench RDMAWrite -benchtime 5000x main HEAD
//	rdmaab -pkg ./mybench -bench . v1.2.0 .
//	rdmaab -count 30 -ci 1% old.test new.test
//
// Where: -where vm boots bin/rxevm (or rxevm from PATH) once, with both
// binaries and rdmaab itself inside, and runs "rdmaab run" there; -where
// local runs the pairs here; auto (the default) picks local when this
// machine has an RDMA device (/sys/class/infiniband) and the VM otherwise.
// The results are DIR/old.txt and DIR/new.txt (-out), each run's output
// with its configuration lines, ready for benchstat; DIR/order.txt is the
// order the runs took, DIR/stop.txt why the runs stopped.
//
// -gate makes the exit status 1 when a metric of -metrics (default p50-ns
// and p99-ns) is worse by more than -threshold and the Mann-Whitney U test
// finds the sides differ at -alpha, a level for all the gated metrics
// together (Holm's correction); every metric's line says why. "rdmaab
// gate" applies the same rule to two files made any other way.
//
// Exit status: 0; 1 when -gate (or rdmaab gate) finds a regression; 2 for
// bad usage; 3 when a build or a run failed or the gate could not judge
// (too few samples).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

const (
	exitRegressed = 1
	exitUsage     = 2
	exitFailed    = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "gate":
			return gateMain(args[1:], stdout, stderr)
		case "run":
			return runMain(ctx, args[1:], stdout, stderr)
		}
	}
	return compareMain(ctx, args, stdout, stderr)
}

// usageErr prints err and returns exitUsage (0 for -h).
func usageErr(stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "rdmaab: %v\n", err)
	return exitUsage
}

// gateFlags are the gate's flags, shared by compare and gate.
type gateFlags struct {
	metrics   string
	threshold float64
	alpha     float64
	// For rdmaab gate on a duet's files: the -count the duet ran with
	// (its looks) and its paired test.
	pairs  int
	method string
}

func (g *gateFlags) register(fs *flag.FlagSet) {
	g.threshold = 0.05
	fs.StringVar(&g.metrics, "metrics", "p50-ns,p99-ns", "`units` the gate judges, comma-separated (as the benchmark reports them: p50-ns, ns/op, ...)")
	fs.Var(percentFlag{&g.threshold}, "threshold", "smallest change of a median that fails the gate, `PCT` (5% or 0.05)")
	fs.Float64Var(&g.alpha, "alpha", 0.05, "significance level of the U tests, for all gated metrics together (Holm's correction)")
}

func (g *gateFlags) rule() (gateRule, error) {
	r := defaultGate()
	units, err := parseUnits(g.metrics)
	if err != nil {
		return r, fmt.Errorf("-metrics: %w", err)
	}
	if g.alpha <= 0 || g.alpha >= 1 {
		return r, fmt.Errorf("-alpha %g: want a level between 0 and 1, like 0.05", g.alpha)
	}
	r.Units, r.Threshold, r.Alpha = units, g.threshold, g.alpha
	return r, nil
}

// gateMain is "rdmaab gate old.txt new.txt".
func gateMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmaab gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var g gateFlags
	g.register(fs)
	fs.IntVar(&g.pairs, "count", 10, "with a duet's bursts.txt beside old.txt: the -count it ran with (the paired rule's looks)")
	fs.StringVar(&g.method, "paired", "rank", "with a duet's bursts.txt: its paired test, rank, sign or t")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmaab gate [flags] old.txt new.txt\n\n"+
			"Exits 1 when a metric got significantly worse by more than the threshold.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageErr(stderr, err)
	}
	if fs.NArg() != 2 {
		return usageErr(stderr, fmt.Errorf("gate takes two files, old and new (benchmark output, -count 10 or more each); got %d arguments", fs.NArg()))
	}
	rule, err := g.rule()
	if err != nil {
		return usageErr(stderr, err)
	}
	old, new, err := readSides(fs.Arg(0), fs.Arg(1))
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return exitFailed
	}
	// A duet's files: the turns beside old.txt give the paired verdict.
	if bs, err := readBurstsFile(filepath.Join(filepath.Dir(fs.Arg(0)), burstsFile)); err == nil && len(bs) > 0 {
		seq := runSpec{pairs: g.pairs, method: g.method, gate: g}
		return duetVerdict(stdout, stderr, bs, old, new, rule, seq.sequentialRule())
	}
	return printVerdict(stdout, stderr, rule.Judge(old, new))
}

// runMain is "rdmaab run": the runner, inside the VM or on an RDMA node.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmaab run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s runSpec
	s.register(fs)
	fs.StringVar(&s.bins[0], "old", "", "old test `binary`")
	fs.StringVar(&s.bins[1], "new", "", "new test `binary`")
	fs.StringVar(&s.outDir, "out", os.Getenv("RXEVM_OUT"), "`dir`ectory for old.txt and new.txt (default $RXEVM_OUT)")
	s.gate.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageErr(stderr, err)
	}
	s.testArgs = fs.Args()
	if s.bins[0] == "" || s.bins[1] == "" || s.outDir == "" {
		return usageErr(stderr, errors.New("run needs -old, -new and -out (or $RXEVM_OUT)"))
	}
	if err := s.check(); err != nil {
		return usageErr(stderr, err)
	}
	if _, err := s.gate.rule(); err != nil {
		return usageErr(stderr, err)
	}
	if err := runSides(ctx, &s, stdout); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return exitFailed
	}
	return 0
}

// abs returns the absolute form of a path, or the path when that fails.
func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
