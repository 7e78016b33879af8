package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rdmabench/rdmabench/internal/abrun"
)

// parseCompare reads the compare command's line: the run spec's flags,
// the gate's, and where and how the sides are built and run.
func parseCompare(args []string, stderr io.Writer) (*abrun.Comparison, error) {
	o := &abrun.Comparison{}
	fs := flag.NewFlagSet("rdmaab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.Spec.Register(fs)
	o.Spec.Gate.Register(fs)
	fs.BoolVar(&o.GateOn, "gate", false, "exit with status 1 when a -metrics metric regressed (see rdmaab gate)")
	fs.StringVar(&o.Pkg, "pkg", ".", "package `dir`ectory whose benchmarks are compared, relative to the current directory (and to each side's tree)")
	fs.StringVar(&o.Spec.OutDir, "out", "out/rdmaab", "`dir`ectory for old.txt, new.txt, order.txt, stop.txt and the runs' stderr")
	fs.StringVar(&o.Where, "where", "auto", "`where` to run: local (this machine's RDMA device), vm (one boot of rxevm) or auto")
	fs.StringVar(&o.Rxevm, "rxevm", "", "rxevm `binary` (default: rxevm beside rdmaab, ./bin/rxevm, or on PATH)")
	fs.StringVar(&o.VMFlags, "vmflags", "", "extra rxevm `flags`, space-separated (e.g. \"-smp 2\")")
	fs.StringVar(&o.SideVMFlags[0], "old-vmflags", "", "rxevm `flags` of the old side only, e.g. \"-kernel old/bzImage -modules old/lib/modules/6.1.0\": when the sides' differ, each side runs in boots of its own, alternated, and the boot is the unit of the verdict")
	fs.StringVar(&o.SideVMFlags[1], "new-vmflags", "", "rxevm `flags` of the new side only (see -old-vmflags)")
	fs.BoolVar(&o.Boots, "boots", false, "run each side in boots of its own, as -old-vmflags/-new-vmflags do, even with the same flags (to measure what a comparison of boots resolves)")
	fs.DurationVar(&o.BootTimeout, "boot-timeout", 180*time.Second, "rxevm's -boot-timeout for every boot, unless -vmflags gives one: boot again when /init has not started within this `duration` (0: rxevm's default, 45s under TCG, too short on a loaded host)")
	fs.IntVar(&o.Spec.BootRuns, "boot-runs", 3, "with -old-vmflags/-new-vmflags: repetitions (-test.count) in each boot")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmaab [flags] OLD NEW [-- test binary flags]\n"+
			"       rdmaab gate [flags] old.txt new.txt\n"+
			"       rdmaab benchstat [benchstat flags] files...\n\n"+
			"OLD and NEW: a git revision, a working tree directory or a test binary.\n"+
			"Runs them as a duet (both alive at once, taking turns) or interleaved (old,new then new,old ...)\n"+
			"in one VM boot or on the local RDMA device\n"+
			"and prints benchstat old.txt new.txt, the per-pair ratios and the gate's verdict.\n\n"+
			exitStatuses+"\nFlags:\n")
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
	o.Sides = [2]string{rest[0], rest[1]}
	rest = rest[2:]
	if len(rest) > 0 {
		if rest[0] != "--" {
			return nil, fmt.Errorf("unexpected %q after OLD NEW: flags go before OLD NEW, test binary flags after --", rest[0])
		}
		o.Spec.TestArgs = rest[1:]
	}
	if o.BootTimeout < 0 {
		return nil, fmt.Errorf("-boot-timeout %v: want a duration, e.g. 180s (0: rxevm's default)", o.BootTimeout)
	}
	switch o.Where {
	case "auto", "local", "vm":
	default:
		return nil, fmt.Errorf("-where %q: want local, vm or auto", o.Where)
	}
	if err := o.Spec.Check(); err != nil {
		return nil, err
	}
	if o.BootsMode() {
		if o.Where == "local" {
			return nil, fmt.Errorf("-boots, -old-vmflags and -new-vmflags compare boots of the VM: drop -where local (or those flags)")
		}
		o.Where = "vm"
		if o.Spec.BootRuns < 1 {
			return nil, fmt.Errorf("-boot-runs %d: want at least 1 (3 gives each boot a median)", o.Spec.BootRuns)
		}
	}
	if _, err := o.Spec.Gate.Rule(); err != nil {
		return nil, err
	}
	return o, nil
}
