// Command rdmatune tunes a host for RDMA latency measurements and puts it
// back: it sets the measuring CPUs' cpufreq governor to performance,
// disables their idle states slower to leave than polling, and moves the
// RDMA device's interrupts off them. It needs root.
//
//	rdmatune plan                    # what it would change, changing nothing
//	rdmatune apply                   # change, and save the old values to -state
//	rdmatune restore                 # put back what apply changed
//	rdmatune hold -- go test -bench . # change, also hold PM QoS at 0, run the
//	                                 # command, restore when it exits or on
//	                                 # SIGINT, SIGTERM, SIGHUP or SIGQUIT
//
// The device and CPUs come from -device and -cpus, else RDMABENCH_DEVICE
// and RDMABENCH_CPUS, else the benchmarks' defaults. rdmatune writes only
// to stderr, so the output of a held command stays as it was.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/childproc"
	"github.com/rdmabench/rdmabench/internal/pmqos"
	"github.com/rdmabench/rdmabench/internal/target"
	"github.com/rdmabench/rdmabench/internal/tune"
)

// killAfter bounds how long hold waits for its command after passing on a
// signal before it kills it and restores anyway.
const killAfter = 10 * time.Second

func main() { os.Exit(run(os.Args[1:], os.Stderr, os.Getenv)) }

type config struct {
	root, state string
	pmqos       bool
	force       bool
	opts        tune.Options
	log         io.Writer
}

func run(args []string, log io.Writer, getenv func(string) string) int {
	fl := flag.NewFlagSet("rdmatune", flag.ContinueOnError)
	fl.SetOutput(log)
	device := fl.String("device", "", "RDMA device whose interrupts to move (default: $RDMABENCH_DEVICE, else the first with an active port)")
	cpus := fl.String("cpus", "", "measuring CPUs `A,B` (default: $RDMABENCH_CPUS, else the last two this process may use)")
	irqs := fl.String("irqs", "", "more interrupts to move off the CPUs, `N,M`")
	state := fl.String("state", tune.DefaultStatePath, "where to save what was changed")
	root := fl.String("root", "/", "root of the sysfs and /proc to change (a fake one for tests)")
	holdQoS := fl.Bool("pmqos", true, "hold: also hold the PM QoS CPU latency limit at 0 while the command runs")
	force := fl.Bool("force", false, "restore: apply a state recorded on another host or before the last boot")
	fl.Usage = func() {
		fmt.Fprintf(log, "usage: rdmatune [flags] plan | apply | restore | hold -- COMMAND [ARGS]\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	c := config{root: *root, state: *state, pmqos: *holdQoS, force: *force, log: log}
	verb, rest := fl.Arg(0), fl.Args()[1:]
	if verb == "restore" {
		return c.restore()
	}
	t, err := target.Resolve(os.DirFS(*root), *device, *cpus, getenv)
	if err != nil {
		return c.fail(2, err)
	}
	c.opts = tune.Options{Root: *root, CPUs: t.CPUs, Device: t.Device}
	if *irqs != "" {
		for _, f := range strings.Split(*irqs, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				return c.fail(2, fmt.Errorf("-irqs=%q: %q is not an interrupt number (example: -irqs 24,25)", *irqs, f))
			}
			c.opts.IRQs = append(c.opts.IRQs, n)
		}
	}
	switch verb {
	case "plan":
		return c.plan()
	case "apply":
		if len(rest) > 0 {
			return c.fail(2, fmt.Errorf("apply takes no arguments; to run a command tuned: rdmatune hold -- COMMAND"))
		}
		_, code := c.apply()
		return code
	case "hold":
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return c.fail(2, errors.New("hold needs a command: rdmatune hold -- go test -bench ."))
		}
		return c.hold(rest)
	}
	return c.fail(2, fmt.Errorf("unknown command %q: want plan, apply, restore or hold", verb))
}

func (c config) fail(code int, err error) int {
	fmt.Fprintf(c.log, "rdmatune: %v\n", err)
	return code
}

func (c config) newPlan() (tune.Plan, error) {
	p, err := tune.NewPlan(c.opts)
	if err != nil {
		return p, err
	}
	fmt.Fprintf(c.log, "rdmatune: CPUs %s, device %q\n", env.FormatCPUList(c.opts.CPUs), c.opts.Device)
	for _, n := range p.Notes {
		fmt.Fprintf(c.log, "rdmatune: note: %s\n", n)
	}
	return p, nil
}

func (c config) plan() int {
	p, err := c.newPlan()
	if err != nil {
		return c.fail(2, err)
	}
	for _, ch := range p.Changes {
		fmt.Fprintf(c.log, "rdmatune: would change %s\n", ch)
	}
	if len(p.Changes) == 0 {
		fmt.Fprintln(c.log, "rdmatune: nothing to change")
	}
	return 0
}

// apply changes the host; it returns whether anything was recorded (and
// so must be restored) and the exit status.
func (c config) apply() (bool, int) {
	p, err := c.newPlan()
	if err != nil {
		return false, c.fail(2, err)
	}
	made, err := tune.Apply(p, c.state)
	for _, ch := range made {
		fmt.Fprintf(c.log, "rdmatune: changed %s\n", ch)
	}
	if errors.Is(err, tune.ErrTuned) {
		return false, c.fail(1, err)
	}
	_, serr := os.Stat(c.state)
	saved := serr == nil
	if len(made) == 0 && err == nil {
		fmt.Fprintln(c.log, "rdmatune: nothing to change")
	}
	if err != nil {
		fmt.Fprintf(c.log, "rdmatune: could not change everything: %v\n", err)
		if strings.Contains(err.Error(), "permission denied") {
			fmt.Fprintln(c.log, "rdmatune: run it as root")
		}
		return saved, 1
	}
	fmt.Fprintf(c.log, "rdmatune: saved in %s; undo with rdmatune restore\n", c.state)
	return saved, 0
}

func (c config) restore() int {
	if p, err := tune.LoadState(c.state); err == nil && c.force {
		if err := tune.CheckIdentity(c.state, p); err != nil {
			fmt.Fprintf(c.log, "rdmatune: -force: restoring although %v\n", err)
		}
	}
	restored, err := tune.Restore(c.state, tune.RestoreOptions{Root: c.root, Force: c.force})
	for _, ch := range restored {
		fmt.Fprintf(c.log, "rdmatune: restored %s to %s\n", ch.What, ch.Old)
	}
	if err != nil {
		return c.fail(1, err)
	}
	return 0
}

// hold tunes, runs the command, and restores whatever happens to it.
func (c config) hold(cmdline []string) int {
	// Catch the signals before changing anything, so none of them can
	// end rdmatune between the change and the restore.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	saved, code := c.apply()
	if !saved {
		return code
	}
	defer func() {
		if c.restore() != 0 {
			fmt.Fprintf(c.log, "rdmatune: the host is still tuned: run rdmatune -state %s restore\n", c.state)
		}
	}()
	if c.pmqos {
		dev := filepath.Join(c.root, strings.TrimPrefix(pmqos.Device, "/"))
		q, err := pmqos.HoldAt(dev, 0)
		if err != nil {
			fmt.Fprintf(c.log, "rdmatune: note: PM QoS not held: %v\n", err)
		} else {
			fmt.Fprintln(c.log, "rdmatune: holding the PM QoS CPU latency limit at 0 while the command runs")
			defer q.Close()
		}
	}
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The command dies with rdmatune, even when rdmatune is killed and
	// cannot pass a signal on. (Not its own process group: the command may
	// read the terminal.)
	childproc.Tie(cmd) // it never outlives its holder
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(c.log, "rdmatune: %v\n", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	var kill <-chan time.Time // fires killAfter after the first signal
wait:
	for {
		select {
		case err = <-done:
			break wait
		case s := <-sigs:
			if kill == nil {
				kill = time.After(killAfter)
				fmt.Fprintf(c.log, "rdmatune: %v: passing it on, then restoring\n", s)
			}
			cmd.Process.Signal(s)
		case <-kill:
			fmt.Fprintf(c.log, "rdmatune: the command did not exit %v after the signal: killing it\n", killAfter)
			cmd.Process.Kill()
		}
	}
	return exitCode(err)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}
