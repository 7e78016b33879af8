package abrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/abbuild"
	"github.com/rdmabench/rdmabench/internal/abtest"
)

// A Comparison is the compare command: the run spec, and where and how
// the two sides are built and run.
type Comparison struct {
	Spec   Spec
	GateOn bool   // the gate's verdict is the exit status
	Pkg    string // package directory compared, relative to each side's tree
	// Where is local (this machine's RDMA device), vm (one boot of
	// rxevm) or auto (local when this machine has an RDMA device).
	Where   string
	Rxevm   string // rxevm binary; "" finds one
	VMFlags string // extra rxevm flags, space-separated
	// SideVMFlags are rxevm flags of one side's boots only: when they
	// differ, the sides run in boots of their own (boots.go).
	SideVMFlags [2]string
	Boots       bool      // boots of their own even with the same flags (an A/A of the method)
	Sides       [2]string // OLD and NEW: git revisions, directories or test binaries
	// BootTimeout is rxevm's -boot-timeout for every boot, unless the VM
	// flags give one (0: rxevm's default, 45 s under TCG, which a boot
	// of a host at load 20 or more overruns: rxevm then boots again, and
	// again, until its own -timeout ends the comparison).
	BootTimeout time.Duration
}

// vmArgs returns rxevm's flags for a boot of side (-1: both sides' boot):
// -boot-timeout, then VMFlags, then the side's own.
func (o *Comparison) vmArgs(side int) []string {
	flags := o.VMFlags
	if side >= 0 {
		flags += " " + o.SideVMFlags[side]
	}
	fs := strings.Fields(flags)
	given := slices.ContainsFunc(fs, func(f string) bool {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		return strings.HasPrefix(f, "-") && name == "boot-timeout"
	})
	if o.BootTimeout > 0 && !given {
		fs = append([]string{"-boot-timeout", o.BootTimeout.String()}, fs...)
	}
	return fs
}

// Run builds the two sides, runs the comparison where o says, prints the
// report and returns the exit status: 0; with GateOn, ExitRegressed when
// the gate finds a regression and ExitUndecided when it cannot decide;
// ExitFailed when a build or a run failed.
func (o *Comparison) Run(ctx context.Context, stdout, stderr io.Writer) int {
	rule, err := o.Spec.Gate.Rule()
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	wrule, err := o.Spec.Gate.WorkRule()
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	where := o.Where
	if where == "auto" {
		where = "vm"
		if hasLocalRDMA() {
			where = "local"
		}
	}
	var rxevm string
	if where == "vm" {
		if rxevm, err = findRxevm(o.Rxevm); err != nil {
			fmt.Fprintf(stderr, "rdmaab: %v\n", err)
			return ExitFailed
		}
	}
	b, err := abbuild.NewBuilder(o.Pkg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	defer b.Close()
	var built [2]abbuild.Built
	for i, name := range []string{"old", "new"} {
		if built[i], err = b.Side(ctx, name, o.Sides[i]); err != nil {
			fmt.Fprintf(stderr, "rdmaab: %v\n", err)
			return ExitFailed
		}
		o.Spec.Bins[i] = built[i].Bin
	}
	o.Spec.OutDir = abs(o.Spec.OutDir)
	if err := prepareOut(o.Spec.OutDir); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	if fi, err := os.Stat(o.Pkg); err == nil && fi.IsDir() {
		o.Spec.Dir = abs(o.Pkg) // the runs' working directory, its testdata
	}
	sides := fmt.Sprintf("old: %s\nnew: %s\n", built[0].Desc, built[1].Desc)
	os.WriteFile(filepath.Join(o.Spec.OutDir, "sides.txt"), []byte(sides), 0o644)

	start := time.Now()
	switch {
	case o.BootsMode():
		fmt.Fprintf(stderr, "rdmaab: running up to %d pairs of boots of %s\n", o.Spec.Pairs, rxevm)
		err = runBoots(ctx, o, rxevm, stderr)
	case where == "local":
		fmt.Fprintf(stderr, "rdmaab: running up to %d pairs on this machine\n", o.Spec.Pairs)
		err = RunSides(ctx, &o.Spec, stderr)
	default:
		fmt.Fprintf(stderr, "rdmaab: running up to %d pairs in one boot of %s\n", o.Spec.Pairs, rxevm)
		err = runInVM(ctx, o, rxevm, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	fmt.Fprintf(stderr, "rdmaab: runs took %.0f s\n", time.Since(start).Seconds())
	fmt.Fprint(stdout, sides)
	return Report(ctx, stdout, stderr, o.Spec.OutDir, rule, wrule, o.Spec.SequentialRule(), o.GateOn)
}

// prepareOut creates dir and removes what an earlier comparison left there.
func prepareOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, n := range []string{"old.txt", "new.txt", "old.log", "new.log", "order.txt", "stop.txt", "sides.txt", burstsFile, bootsFile, "way.txt", WorkDiffFile, VerdictFileName} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(dir, workDir))
}

// runInVM boots rxevm once with both binaries and rdmaab inside and runs
// "rdmaab run" there; its output lands in the shared -out directory.
func runInVM(ctx context.Context, o *Comparison, rxevm string, progress io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	s := &o.Spec
	// Every run may take its -run-timeout; rxevm's own bound covers them all.
	bound := time.Duration(2*s.Pairs)*(s.RunTimeout+30*time.Second) + 5*time.Minute
	args := o.vmArgs(-1)
	if s.Work {
		args = append(args, "-insns")
	}
	args = append(args, "-timeout", bound.String(), "-out", s.OutDir,
		"-include", s.Bins[0], "-include", s.Bins[1],
		self, "run", "-old", s.Bins[0], "-new", s.Bins[1])
	args = append(args, s.Flags()...)
	args = append(args, "--")
	args = append(args, s.TestArgs...)
	cmd := exec.CommandContext(ctx, rxevm, args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = progress, progress
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // rxevm kills QEMU and cleans up
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (the runs' errors are above; their stderr in %s/*.log)", rxevm, err, s.OutDir)
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
		return ExitFailed
	}
	switch err := v.Err(); {
	case v.Failed():
		return ExitRegressed
	case errors.Is(err, abtest.ErrTooFew):
		return ExitUndecided
	case err != nil:
		return ExitFailed
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
