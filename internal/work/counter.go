package work

import (
	"errors"
	"fmt"
	"os"
)

// Counts are instructions counted since a Reset. The plugin splits the
// kernel's: Kernel on the measuring threads' vCPUs outside their waits
// (the system calls, and the provider's work they run), KernelWait inside
// them (interrupts while a thread spins, which follow time), KernelOther
// on the other vCPUs. A hardware counter counts Kernel only.
//
// The plugin also splits the same kernel instructions (of every vCPU, while
// any window is open) another way, when it knows the kernel's roles
// (RolesKnown, roles.go): KernelWork is the kernel's work wherever it ran,
// KernelTime what follows time (the timer interrupt, the softirqs of
// timers, RCU and load balancing, the idle task), KernelOthers the system
// calls of other processes on vCPUs with no window open.
type Counts struct {
	User, Kernel, KernelWait, KernelOther uint64

	KernelWork, KernelTime, KernelOthers uint64
	RolesKnown                           bool
}

// A Counter counts the instructions of the measured loops. Reset and Read
// bracket a measurement; both are called on the measuring goroutine with
// its thread locked (the hardware counter counts that thread).
type Counter interface {
	Reset() error
	Read() (Counts, error)
	Close() error
	// Source names what counts, for the benchmark's notes: "rxevm-plugin",
	// "perf".
	Source() string
}

// ErrUnavailable means no source of instruction counts works here; the
// error says why.
var ErrUnavailable = errors.New("no instruction counter")

// EnvPlugin is set by rxevm -insns in the guest: the file the plugin
// writes its counts to.
const EnvPlugin = "RXEVM_INSNS"

// Open returns the first counter that works here: rxevm's plugin when
// $RXEVM_INSNS names its counts, else the hardware counters of the calling
// thread. Otherwise it returns an error matching ErrUnavailable that says
// why. Call it on the measuring goroutine, with its thread locked.
func Open() (Counter, error) {
	if path := os.Getenv(EnvPlugin); path != "" {
		return OpenPlugin(path)
	}
	c, err := openPerf()
	if err != nil {
		return nil, fmt.Errorf("%w: not in rxevm -insns, and %v", ErrUnavailable, err)
	}
	return c, nil
}

// A Metric is one work metric of a benchmark's result line.
type Metric struct {
	Value float64
	Unit  string
}

// The metrics' units, beside the time metrics on a benchmark's line.
const (
	UnitUser        = "user-insns/op"
	UnitKernel      = "kernel-insns/op"
	UnitKernelWait  = "kernel-wait-insns/op"
	UnitKernelOther = "kernel-other-insns/op"
	// UnitKernelWork is the kernel's work on every vCPU, time's left out
	// (Counts.KernelWork): the kernel metric to gate on.
	UnitKernelWork = "kernel-work-insns/op"
)

// PerOp returns c per operation as benchmark metrics: user and kernel
// always, the kernel's two other parts where the source counts them
// (source "rxevm-plugin").
func (c Counts) PerOp(ops uint64, source string) []Metric {
	per := func(n uint64) float64 {
		if ops == 0 {
			return 0
		}
		return float64(n) / float64(ops)
	}
	m := []Metric{{per(c.User), UnitUser}, {per(c.Kernel), UnitKernel}}
	if source == "rxevm-plugin" {
		m = append(m, Metric{per(c.KernelWait), UnitKernelWait}, Metric{per(c.KernelOther), UnitKernelOther})
		if c.RolesKnown {
			m = append(m, Metric{per(c.KernelWork), UnitKernelWork})
		}
	}
	return m
}
