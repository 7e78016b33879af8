// Command rdmaab compares two builds of the same benchmarks without false
// alarms from a drifting machine. Where both test binaries can take turns
// (they link rdmalat's turn-taking), it runs them as a duet: a pair of
// processes, one per side, alive at once, taking turns of -burst round
// trips in ABBA order, up to -count pairs, judged pair by pair (the paired
// verdict, docs/comparing.md). Otherwise it runs them interleaved,
// old and new in alternating pairs (old,new then new,old ...), one -count
// repetition per run. Either way in one boot of the soft-RoCE VM (or
// directly on a node with an RDMA device); it prints benchstat's table,
// the median per-pair ratio with its interval, and a regression verdict.
//
//	rdmaab [flags] OLD NEW [-- test binary flags]
//	rdmaab gate [flags] old.txt new.txt
//	rdmaab benchstat [benchstat flags] files...
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
// and p99-ns) is worse by more than -threshold and its test finds the
// sides differ at -alpha, a level for all the gated metrics together
// (Holm's correction); every metric's line says why. Every benchmark is
// judged: in a duet, one that takes turns (rdmalat.Measure) by its turns,
// one that times itself by its pairs of runs (the paired verdict over the
// duet's pairs, either way), and p99 by the Mann-Whitney U test over the
// runs; interleaved runs by the U test. A benchmark on one side only is
// named and not counted. The defaults are internal/abtest's
// DefaultThresholds. "rdmaab gate" applies the same rule to two files made
// any other way (a duet's, with its bursts.txt beside them).
//
// -work counts the work instead (rxevm -insns; interleaved runs, the VM's
// one counter counting one process at a time): the gate judges the work
// units of -metrics (user-insns/op, kernel-insns/op by default) by the
// work rule, a median worse by more than the unit's threshold
// (-work-thresholds; abtest.DefaultThresholds) with every run of new worse
// than every run of old, from 3 runs a side, and prints it beside time;
// where work decided, a time verdict that could not decide is not counted.
// DIR/work-diff.txt is where the work went, per function (docs/work.md).
//
// Exit status, kept stable (rdmacompare's are the same):
//
//	0  no regression (or no -gate)
//	1  -gate (or rdmaab gate) found a regression
//	2  bad usage
//	3  failure: a build or a run failed, or no gated metric was found
//	4  undecided: too few samples or pairs to decide (more -count would)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rdmabench/rdmabench/internal/abrun"
	"github.com/rdmabench/rdmabench/internal/abtest"
)

const exitUsage = abtest.ExitUsage

// exitStatuses is the usage's table of exit statuses (abtest's).
const exitStatuses = "Exit status: 0 pass; 1 regression (-gate); 2 bad usage; 3 failure (a build or run failed, no gated metric); 4 undecided (more -count would decide).\n"

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
		case "benchstat":
			return benchstatMain(ctx, args[1:], stdout, stderr)
		}
	}
	o, err := parseCompare(args, stderr)
	if err != nil {
		return usageErr(stderr, err)
	}
	return o.Run(ctx, stdout, stderr)
}

// usageErr prints err and returns exitUsage (0 for -h).
func usageErr(stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "rdmaab: %v\n", err)
	return exitUsage
}

// gateMain is "rdmaab gate old.txt new.txt".
func gateMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmaab gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var seq abrun.Spec // the duet's paired rule, for a duet's files
	seq.Gate.Register(fs)
	fs.IntVar(&seq.Pairs, "count", 10, "with a duet's bursts.txt beside old.txt: the -count it ran with (the paired rule's looks)")
	fs.StringVar(&seq.Method, "paired", abtest.DefaultThresholds.Method.Flag(), "with a duet's bursts.txt: its paired test, rank, sign or t")
	jsonName := fs.String("json", "", "also write the verdict for machines to `file` (as rdmaab writes verdict.json beside old.txt)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmaab gate [flags] old.txt new.txt\n\n"+
			"Judges every benchmark of both files (a duet's by its bursts.txt and pairs of runs; work metrics by the work rule),\n"+
			"and where rdmaab -work left a work/ directory beside them, writes where the work went to work-diff.txt there.\n\n"+exitStatuses+"\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageErr(stderr, err)
	}
	if fs.NArg() != 2 {
		return usageErr(stderr, fmt.Errorf("gate takes two files, old and new (benchmark output, -count 10 or more each); got %d arguments", fs.NArg()))
	}
	rule, err := seq.Gate.Rule()
	if err != nil {
		return usageErr(stderr, err)
	}
	wrule, err := seq.Gate.WorkRule()
	if err != nil {
		return usageErr(stderr, err)
	}
	return abrun.Gate(stdout, stderr, fs.Arg(0), fs.Arg(1), *jsonName, rule, wrule, seq.SequentialRule())
}

// benchstatMain is "rdmaab benchstat [benchstat's flags] files...":
// benchstat of the x/perf this rdmaab was built with, in any module.
func benchstatMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprintf(stderr, "usage: rdmaab benchstat [benchstat flags] files...\n\n"+
			"Runs the benchstat of the golang.org/x/perf this rdmaab was built with (built once into the user's cache).\n")
		if len(args) == 0 {
			return exitUsage
		}
		return 0
	}
	if err := abrun.Benchstat(ctx, stdout, stderr, args...); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return abtest.ExitFailed
	}
	return 0
}

// runMain is "rdmaab run": the runner, inside the VM or on an RDMA node.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmaab run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s abrun.Spec
	s.Register(fs)
	fs.StringVar(&s.Bins[0], "old", "", "old test `binary`")
	fs.StringVar(&s.Bins[1], "new", "", "new test `binary`")
	fs.StringVar(&s.OutDir, "out", os.Getenv("RXEVM_OUT"), "`dir`ectory for old.txt and new.txt (default $RXEVM_OUT)")
	s.Gate.Register(fs)
	if err := fs.Parse(args); err != nil {
		return usageErr(stderr, err)
	}
	s.TestArgs = fs.Args()
	if s.Bins[0] == "" || s.Bins[1] == "" || s.OutDir == "" {
		return usageErr(stderr, errors.New("run needs -old, -new and -out (or $RXEVM_OUT)"))
	}
	if err := s.Check(); err != nil {
		return usageErr(stderr, err)
	}
	if _, err := s.Gate.Rule(); err != nil {
		return usageErr(stderr, err)
	}
	if err := abrun.RunSides(ctx, &s, stdout); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return abrun.ExitFailed
	}
	return 0
}
