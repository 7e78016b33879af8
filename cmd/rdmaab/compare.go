package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/abtest"
)

type gateRule = abtest.GateRule

func defaultGate() gateRule                 { return abtest.DefaultGateRule }
func parseUnits(s string) ([]string, error) { return abtest.ParseUnits(s) }

// compareOpts is the compare command's command line beyond the run spec.
type compareOpts struct {
	spec    runSpec
	gate    gateFlags
	gateOn  bool
	pkg     string
	where   string
	rxevm   string
	vmFlags string
	// sideVMFlags are rxevm flags of one side's boots only: when they
	// differ, the sides run in boots of their own (boots.go).
	sideVMFlags [2]string
	boots       bool // boots of their own even with the same flags (an A/A of the method)
	sides       [2]string
}

func parseCompare(args []string, stderr io.Writer) (*compareOpts, error) {
	o := &compareOpts{}
	fs := flag.NewFlagSet("rdmaab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.spec.register(fs)
	o.gate.register(fs)
	fs.BoolVar(&o.gateOn, "gate", false, "exit with status 1 when a -metrics metric regressed (see rdmaab gate)")
	fs.StringVar(&o.pkg, "pkg", ".", "package `dir`ectory whose benchmarks are compared, relative to the current directory (and to each side's tree)")
	fs.StringVar(&o.spec.outDir, "out", "out/rdmaab", "`dir`ectory for old.txt, new.txt, order.txt, stop.txt and the runs' stderr")
	fs.StringVar(&o.where, "where", "auto", "`where` to run: local (this machine's RDMA device), vm (one boot of rxevm) or auto")
	fs.StringVar(&o.rxevm, "rxevm", "", "rxevm `binary` (default: rxevm beside rdmaab, ./bin/rxevm, or on PATH)")
	fs.StringVar(&o.vmFlags, "vmflags", "", "extra rxevm `flags`, space-separated (e.g. \"-smp 2\")")
	fs.StringVar(&o.sideVMFlags[0], "old-vmflags", "", "rxevm `flags` of the old side only, e.g. \"-kernel old/bzImage -modules old/lib/modules/6.1.0\": when the sides' differ, each side runs in boots of its own, alternated, and the boot is the unit of the verdict")
	fs.StringVar(&o.sideVMFlags[1], "new-vmflags", "", "rxevm `flags` of the new side only (see -old-vmflags)")
	fs.BoolVar(&o.boots, "boots", false, "run each side in boots of its own, as -old-vmflags/-new-vmflags do, even with the same flags (to measure what a comparison of boots resolves)")
	fs.IntVar(&o.spec.bootRuns, "boot-runs", 3, "with -old-vmflags/-new-vmflags: repetitions (-test.count) in each boot")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmaab [flags] OLD NEW [-- test binary flags]\n"+
			"       rdmaab gate [flags] old.txt new.txt\n\n"+
			"OLD and NEW: a git revision, a working tree directory or a test binary.\n"+
			"Runs them as a duet (both alive at once, taking turns) or interleaved (old,new then new,old ...)\n"+
			"in one VM boot or on the local RDMA device\n"+
			"and prints benchstat old.txt new.txt, the per-pair ratios and the gate's verdict.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	rest := fs.Args()
	if len(rest) < 2 {
		fs.Usage()
		return nil, fmt.Errorf("want OLD and NEW (e.g. rdmaab main HEAD), got %d arguments; flags go before them", len(rest))
	}
	o.sides = [2]string{rest[0], rest[1]}
	rest = rest[2:]
	if len(rest) > 0 {
		if rest[0] != "--" {
			return nil, fmt.Errorf("unexpected %q after OLD NEW: flags go before OLD NEW, test binary flags after --", rest[0])
		}
		o.spec.testArgs = rest[1:]
	}
	switch o.where {
	case "auto", "local", "vm":
	default:
		return nil, fmt.Errorf("-where %q: want local, vm or auto", o.where)
	}
	if err := o.spec.check(); err != nil {
		return nil, err
	}
	if o.bootsMode() {
		if o.where == "local" {
			return nil, fmt.Errorf("-boots, -old-vmflags and -new-vmflags compare boots of the VM: drop -where local (or those flags)")
		}
		o.where = "vm"
		if o.spec.bootRuns < 1 {
			return nil, fmt.Errorf("-boot-runs %d: want at least 1 (3 gives each boot a median)", o.spec.bootRuns)
		}
	}
	if _, err := o.gate.rule(); err != nil {
		return nil, err
	}
	o.spec.gate = o.gate
	return o, nil
}

func compareMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseCompare(args, stderr)
	if err != nil {
		return usageErr(stderr, err)
	}
	rule, _ := o.gate.rule()
	where := o.where
	if where == "auto" {
		where = "vm"
		if hasLocalRDMA() {
			where = "local"
		}
	}
	var rxevm string
	if where == "vm" {
		if rxevm, err = findRxevm(o.rxevm); err != nil {
			fmt.Fprintf(stderr, "rdmaab: %v\n", err)
			return exitFailed
		}
	}
	b, err := newBuilder(o.pkg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return exitFailed
	}
	defer b.Close()
	var built [2]builtSide
	for i, name := range []string{"old", "new"} {
		if built[i], err = b.side(ctx, name, o.sides[i]); err != nil {
			fmt.Fprintf(stderr, "rdmaab: %v\n", err)
			return exitFailed
		}
		o.spec.bins[i] = built[i].bin
	}
	o.spec.outDir = abs(o.spec.outDir)
	if err := prepareOut(o.spec.outDir); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return exitFailed
	}
	if fi, err := os.Stat(o.pkg); err == nil && fi.IsDir() {
		o.spec.dir = abs(o.pkg) // the runs' working directory, its testdata
	}
	sides := fmt.Sprintf("old: %s\nnew: %s\n", built[0].desc, built[1].desc)
	os.WriteFile(filepath.Join(o.spec.outDir, "sides.txt"), []byte(sides), 0o644)

	start := time.Now()
	switch {
	case o.bootsMode():
		fmt.Fprintf(stderr, "rdmaab: running up to %d pairs of boots of %s\n", o.spec.pairs, rxevm)
		err = runBoots(ctx, o, rxevm, stderr)
	case where == "local":
		fmt.Fprintf(stderr, "rdmaab: running up to %d pairs on this machine\n", o.spec.pairs)
		err = runSides(ctx, &o.spec, stderr)
	default:
		fmt.Fprintf(stderr, "rdmaab: running up to %d pairs in one boot of %s\n", o.spec.pairs, rxevm)
		err = runInVM(ctx, o, rxevm, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "rdmaab: runs took %.0f s\n", time.Since(start).Seconds())
	fmt.Fprint(stdout, sides)
	return report(ctx, stdout, stderr, o.spec.outDir, rule, o.spec.sequentialRule(), o.gateOn)
}

// prepareOut creates dir and removes what an earlier comparison left there.
func prepareOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, n := range []string{"old.txt", "new.txt", "old.log", "new.log", "order.txt", "stop.txt", "sides.txt", burstsFile, bootsFile, "way.txt"} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// runInVM boots rxevm once with both binaries and rdmaab inside and runs
// "rdmaab run" there; its output lands in the shared -out directory.
func runInVM(ctx context.Context, o *compareOpts, rxevm string, progress io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	s := &o.spec
	// Every run may take its -run-timeout; rxevm's own bound covers them all.
	bound := time.Duration(2*s.pairs)*(s.runTimeout+30*time.Second) + 5*time.Minute
	args := strings.Fields(o.vmFlags)
	args = append(args, "-timeout", bound.String(), "-out", s.outDir,
		"-include", s.bins[0], "-include", s.bins[1],
		self, "run", "-old", s.bins[0], "-new", s.bins[1])
	args = append(args, s.flags()...)
	args = append(args, "--")
	args = append(args, s.testArgs...)
	cmd := exec.CommandContext(ctx, rxevm, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = progress, progress
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // rxevm kills QEMU and cleans up
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (the runs' errors are above; their stderr in %s/*.log)", rxevm, err, s.outDir)
	}
	return nil
}

// hasLocalRDMA reports whether this machine has an RDMA device.
func hasLocalRDMA() bool {
	ents, err := os.ReadDir("/sys/class/infiniband")
	return err == nil && len(ents) > 0
}

// findRxevm returns the rxevm to boot.
func findRxevm(flagValue string) (string, error) {
	if flagValue != "" {
		if _, err := os.Stat(flagValue); err != nil {
			return "", fmt.Errorf("-rxevm: %w", err)
		}
		return abs(flagValue), nil
	}
	var tried []string
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "rxevm")
		tried = append(tried, p)
		if isExec(p) {
			return p, nil
		}
	}
	tried = append(tried, "bin/rxevm")
	if isExec("bin/rxevm") {
		return abs("bin/rxevm"), nil
	}
	if p, err := exec.LookPath("rxevm"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no RDMA device here and no rxevm to boot the soft-RoCE VM (looked at %s and PATH): go build -o bin/rxevm ./cmd/rxevm, or go install github.com/rdmabench/rdmabench/cmd/rxevm@latest, or give -rxevm",
		strings.Join(tried, ", "))
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// readSides reads two benchmark output files.
func readSides(oldName, newName string) (old, new *abtest.Results, err error) {
	read := func(name string) (*abtest.Results, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return abtest.ReadResults(f, name)
	}
	if old, err = read(oldName); err != nil {
		return nil, nil, err
	}
	if new, err = read(newName); err != nil {
		return nil, nil, err
	}
	return old, new, nil
}

// printVerdict prints the gate's lines and returns the exit status.
func printVerdict(stdout, stderr io.Writer, v abtest.Verdict) int {
	if err := v.Print(stdout); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return exitFailed
	}
	switch {
	case v.Failed():
		return exitRegressed
	case v.Err() != nil:
		return exitFailed
	}
	return 0
}
