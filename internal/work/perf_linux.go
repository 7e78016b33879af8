package work

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// perfCounter counts the calling thread's instructions with the PMU:
// instructions:u and instructions:k, one event each. Each read also
// gives the time the event was enabled and the time it ran: where the
// PMU has fewer counters than events want, the kernel multiplexes them
// and a count covers only the time it ran, so it is scaled up by
// enabled/running (as perf stat does) and the scaling kept to be seen.
type perfCounter struct {
	sys          perfSys
	user, kernel int
}

// perfSys is the part of the kernel the counter uses: the system's, or a
// fake in the tests.
type perfSys interface {
	open(attr *unix.PerfEventAttr) (int, error)
	ioctl(fd int, req uint) error
	read(fd int, b []byte) (int, error)
	close(fd int) error
}

type kernelPerf struct{}

func (kernelPerf) open(attr *unix.PerfEventAttr) (int, error) {
	return unix.PerfEventOpen(attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
}
func (kernelPerf) ioctl(fd int, req uint) error       { return unix.IoctlSetInt(fd, req, 0) }
func (kernelPerf) read(fd int, b []byte) (int, error) { return unix.Read(fd, b) }
func (kernelPerf) close(fd int) error                 { return unix.Close(fd) }

func openPerf() (Counter, error) { return openPerfWith(kernelPerf{}) }

func openPerfWith(sys perfSys) (Counter, error) {
	u, err := sys.open(perfAttr(true))
	if err != nil {
		return nil, fmt.Errorf("perf_event_open(instructions:u): %w (%s)", err, perfWhy(err, true))
	}
	k, err := sys.open(perfAttr(false))
	if err != nil {
		sys.close(u)
		return nil, fmt.Errorf("perf_event_open(instructions:k): %w (%s)", err, perfWhy(err, false))
	}
	return &perfCounter{sys: sys, user: u, kernel: k}, nil
}

// perfWhy says what an error of perf_event_open means here, and what to do.
func perfWhy(err error, user bool) string {
	switch {
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		if user {
			return "kernel.perf_event_paranoid forbids counting: sysctl kernel.perf_event_paranoid=2 or lower, or CAP_PERFMON"
		}
		return "kernel.perf_event_paranoid above 1 hides kernel counts: sysctl kernel.perf_event_paranoid=1, or CAP_PERFMON"
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODEV):
		return "no hardware instructions event: a VM without a virtual PMU, or a CPU perf does not know"
	case errors.Is(err, unix.ENOSYS):
		return "a kernel without perf events (CONFIG_PERF_EVENTS), or a seccomp filter that forbids perf_event_open"
	case errors.Is(err, unix.EMFILE):
		return "out of file descriptors"
	}
	return "no readable PMU"
}

// perfAttr is a disabled instruction counter on the calling thread,
// counting user mode (user) or kernel mode only, read with its enabled
// and running times.
func perfAttr(user bool) *unix.PerfEventAttr {
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_HARDWARE,
		Config:      unix.PERF_COUNT_HW_INSTRUCTIONS,
		Bits:        unix.PerfBitDisabled | unix.PerfBitExcludeHv,
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
	}
	attr.Size = uint32(binary.Size(attr))
	if user {
		attr.Bits |= unix.PerfBitExcludeKernel
	} else {
		attr.Bits |= unix.PerfBitExcludeUser
	}
	return &attr
}

func (c *perfCounter) Source() string { return "perf" }

func (c *perfCounter) Reset() error {
	for _, fd := range []int{c.user, c.kernel} {
		if err := c.sys.ioctl(fd, unix.PERF_EVENT_IOC_RESET); err != nil {
			return fmt.Errorf("perf reset: %w", err)
		}
		if err := c.sys.ioctl(fd, unix.PERF_EVENT_IOC_ENABLE); err != nil {
			return fmt.Errorf("perf enable: %w", err)
		}
	}
	return nil
}

// ErrNotCounted means a hardware counter never ran while it was enabled:
// other events (a profiler, the NMI watchdog) held every counter the
// whole time, so there is no count to scale.
var ErrNotCounted = errors.New("the hardware counter never ran while enabled")

func (c *perfCounter) Read() (Counts, error) {
	var n [2]uint64
	for i, fd := range []int{c.user, c.kernel} {
		if err := c.sys.ioctl(fd, unix.PERF_EVENT_IOC_DISABLE); err != nil {
			return Counts{}, fmt.Errorf("perf disable: %w", err)
		}
		var b [24]byte
		m, err := c.sys.read(fd, b[:])
		if err != nil {
			return Counts{}, fmt.Errorf("perf read: %w", err)
		}
		if n[i], err = parsePerfRead(b[:m]); err != nil {
			return Counts{}, err
		}
	}
	return Counts{User: n[0], Kernel: n[1]}, nil
}

// parsePerfRead reads one event's read(2) in the format perfAttr asks
// for: value, time enabled, time running (native-endian uint64s), and
// returns the value, scaled by enabled/running where it was multiplexed.
func parsePerfRead(b []byte) (uint64, error) {
	if len(b) != 24 {
		return 0, fmt.Errorf("%w: perf read gave %d bytes, want 24 (value, time enabled, time running)", ErrMalformed, len(b))
	}
	v := binary.NativeEndian.Uint64(b)
	enabled, running := binary.NativeEndian.Uint64(b[8:]), binary.NativeEndian.Uint64(b[16:])
	switch {
	case running == 0 && enabled == 0:
		return v, nil // enabled and disabled at once: nothing ran
	case running == 0:
		return 0, fmt.Errorf("%w (enabled %d ns, ran 0 ns)", ErrNotCounted, enabled)
	case running >= enabled:
		return v, nil
	}
	return uint64(float64(v) * float64(enabled) / float64(running)), nil
}

func (c *perfCounter) Close() error {
	if c == nil || c.user < 0 {
		return nil
	}
	err := c.sys.close(c.user)
	if e := c.sys.close(c.kernel); err == nil {
		err = e
	}
	c.user, c.kernel = -1, -1
	return err
}
