package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/guest"
	"github.com/rdmabench/rdmabench/internal/vm/qemu"
	"github.com/rdmabench/rdmabench/internal/vm/qmp"
)

// Run boots one VM with rxe0 and rxe1, runs the program and returns rxevm's
// exit status: the program's, ExitTimeout or ExitRunner.
func Run(ctx context.Context, c *Config, stdout, stderr io.Writer) int {
	return session(ctx, c, stderr, "rxevm-", func(tmp string, logf func(string, ...any)) int {
		return runVM(ctx, c, tmp, stdout, stderr, logf)
	})
}

// session runs body with the progress log and a temporary directory,
// removed afterwards, and returns its exit status.
func session(ctx context.Context, c *Config, stderr io.Writer, pattern string, body func(tmp string, logf func(string, ...any)) int) int {
	logf, closeLog := progressLog(c, stderr)
	defer closeLog()
	for _, d := range sweepTmp(os.TempDir()) {
		logf("removed %s, left by an rxevm that was killed", d)
	}
	tmp, unlock, err := sessionTmp("", pattern)
	if err != nil {
		return fail(ctx, stderr, err)
	}
	defer os.RemoveAll(tmp)
	defer unlock()
	return body(tmp, logf)
}

// runVM is Run in its temporary directory tmp.
func runVM(ctx context.Context, c *Config, tmp string, stdout, stderr io.Writer, logf func(string, ...any)) int {
	p, err := prepare(ctx, c, tmp, stderr, logf)
	if err != nil {
		return fail(ctx, stderr, err)
	}
	v := &qemu.VM{
		Qemu: p.qemu, Kernel: p.kernel, Initrd: p.initrd,
		SMP: c.SMP, Mem: c.Mem, OutDir: c.OutDir, OutModel: qemu.ShareModel(c.OutDir),
		Append: c.Append, Nonce: p.nonce, Isolate: c.Isolate,
		PluginArgs: p.plugin, InsnsDir: p.insnsDir, NUMA2: c.NUMA2,
	}
	if v.PinCPUs, _ = qmp.ParsePin(c.Pin); v.PinCPUs != nil {
		v.QMPSock = qmp.Socket(tmp)
	}
	memo := kvmMemo{dir: p.cacheDir}
	useKVM := c.Accel == "kvm" || c.Accel == "auto" && qemu.KVMUsable() && !memo.failed(logf)
	r := retry{
		plan:  accelPlan(c.Accel, useKVM, c.Attempts),
		bound: func(accel string) time.Duration { return bootBound(c.BootTimeout, accel) },
	}
	if c.Accel == "auto" {
		r.kvmFallback = memo.record
	}
	var echo io.Writer
	if c.Verbose {
		echo = stderr
	}
	status, con, err := r.boot(ctx, v, stdout, echo, logf)
	switch {
	case err == nil:
		return status
	case ctx.Err() != nil:
		if isTimeout(ctx) {
			fmt.Fprintf(stderr, "rxevm: %v: killed the VM; console tail:\n%s\n", context.Cause(ctx), con.Tail(30))
			return ExitTimeout
		}
		return ExitRunner
	case errors.Is(err, errGaveUp):
		return fail(ctx, stderr, err)
	}
	fmt.Fprintf(stderr, "rxevm: %v; console tail:\n%s\n", err, con.Tail(40))
	return ExitRunner
}

// fail reports err on stderr and returns the exit status for it.
func fail(ctx context.Context, stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "rxevm: %v\n", err)
	if isTimeout(ctx) {
		return ExitTimeout
	}
	return ExitRunner
}

// isTimeout reports whether ctx ended because its deadline (-timeout) passed.
func isTimeout(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// errGaveUp means every boot of the plan showed no sign of life.
var errGaveUp = errors.New("gave up")

// A retry says how to boot again when a boot shows no sign of life: the
// one VM and every node of a fleet go through it.
type retry struct {
	plan  []string                         // the accelerator of each boot to try
	bound func(accel string) time.Duration // how long to wait for /init's first line
	// earlyExit: boot again when QEMU exits before /init starts, too (an
	// early panic; fleet nodes on a loaded host).
	earlyExit bool
	// kvmFallback, when set (-accel auto), is called when a KVM boot shows
	// no sign of life or QEMU exits early; the plan goes on with TCG.
	kvmFallback func()
}

// boot boots v with each accelerator of the plan in turn until a boot shows
// a sign of life, and returns that boot's result (qemu.VM.Boot) and
// console; errGaveUp when none did.
func (r retry) boot(ctx context.Context, v *qemu.VM, out, echo io.Writer, logf func(string, ...any)) (int, *guest.Console, error) {
	var con *guest.Console
	var err error
	for i, accel := range r.plan {
		v.Accel = accel
		con = guest.NewConsole(echo, guest.AliveLine, guest.ReadyLine)
		logf("%sbooting (%s, -smp %d -m %d)", v.Prefix(), accel, v.SMP, v.Mem)
		var status int
		status, err = v.Boot(ctx, r.bound(accel), out, con, logf)
		early := errors.Is(err, qemu.ErrQemuStart)
		again := bootAgain(err, r.earlyExit, con.Tail(60))
		switch {
		case err == nil:
			return status, con, nil
		case ctx.Err() != nil:
			return 0, con, err
		case accel == "kvm" && r.kvmFallback != nil && (errors.Is(err, qemu.ErrNoLife) || early):
			logf("KVM did not work (%v); falling back to TCG", err)
			r.kvmFallback()
		case again:
			if i+1 < len(r.plan) {
				logf("%s%v; killed the VM, booting again", v.Prefix(), err)
			} else {
				logf("%s%v; killed the VM", v.Prefix(), err)
			}
		default:
			return 0, con, err
		}
	}
	return 0, con, fmt.Errorf("%w after %d boots without a sign of life (last: %v); try -v to see the console", errGaveUp, len(r.plan), err)
}

// bootAgain reports whether a boot that ended in err is worth booting
// again: no sign of life, or QEMU exiting before /init because the guest's
// kernel panicked (an IO-APIC timer check fails now and then on a loaded
// host; the program never ran, so nothing is repeated), or any early exit
// when earlyExit is set. An early exit without a panic (a bad QEMU flag)
// fails at once.
func bootAgain(err error, earlyExit bool, console string) bool {
	if errors.Is(err, qemu.ErrNoLife) {
		return true
	}
	if !errors.Is(err, qemu.ErrQemuStart) {
		return false
	}
	return earlyExit || strings.Contains(console, "Kernel panic")
}

// accelPlan lists the accelerator of each boot to try: under -accel auto,
// one KVM boot (when useKVM) and then TCG ones.
func accelPlan(accel string, useKVM bool, attempts int) []string {
	var plan []string
	if useKVM {
		plan = append(plan, "kvm")
	}
	if accel == "kvm" {
		for len(plan) < attempts {
			plan = append(plan, "kvm")
		}
		return plan
	}
	for i := 0; i < attempts; i++ {
		plan = append(plan, "tcg")
	}
	return plan
}

// bootBound is how long to wait for /init's first line.
func bootBound(flagValue time.Duration, accel string) time.Duration {
	switch {
	case flagValue > 0:
		return flagValue
	case accel == "kvm":
		return 15 * time.Second
	}
	return 45 * time.Second
}
