package hostinfo

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// ClockCost is what reading the clock costs where the benchmarks run,
// measured there: Read is one clock_gettime(CLOCK_MONOTONIC) as the
// measuring loops make it (through the vDSO where the clocksource allows),
// Syscall the same call forced through a system call. A clocksource's name
// does not tell: tsc and kvm-clock are read in user space, hpet and acpi_pm
// are not, and under emulation every figure is larger; the ratio of the
// two figures is what says whether each sample pays for a trip into the
// kernel.
type ClockCost struct {
	Read, Syscall time.Duration
}

// Slow reports whether a clock read costs as much as a system call (at
// least half of one): the read leaves user space.
func (c ClockCost) Slow() bool {
	return c.Read > 0 && c.Syscall > 0 && 2*c.Read >= c.Syscall
}

// String gives both figures: "26 ns (as a system call: 1150 ns)".
func (c ClockCost) String() string {
	return fmt.Sprintf("%d ns (as a system call: %d ns)", c.Read.Nanoseconds(), c.Syscall.Nanoseconds())
}

// MeasureClockCost times both reads on the calling thread: the fastest of
// several batches, so that a preemption during one does not count.
func MeasureClockCost() ClockCost {
	const batches, n = 7, 2000
	best := func(f func()) time.Duration {
		b := time.Duration(1<<63 - 1)
		for range batches {
			start := time.Now()
			for range n {
				f()
			}
			b = min(b, time.Since(start)/n)
		}
		return b
	}
	var sink time.Duration
	start := time.Now()
	read := best(func() { sink += time.Since(start) }) // runtime nanotime: the vDSO's clock_gettime
	var ts unix.Timespec
	syscall := best(func() { _ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) }) // x/sys/unix: a plain system call
	_ = sink
	return ClockCost{Read: read, Syscall: syscall}
}
