package work

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// perfCounter counts the calling thread's instructions with the PMU:
// instructions:u and instructions:k, one event each.
type perfCounter struct {
	user, kernel int
}

func openPerf() (Counter, error) {
	u, err := perfOpen(true)
	if err != nil {
		return nil, fmt.Errorf("perf_event_open(instructions:u): %v (no readable PMU: a VM without one, or kernel.perf_event_paranoid too high)", err)
	}
	k, err := perfOpen(false)
	if err != nil {
		unix.Close(u)
		return nil, fmt.Errorf("perf_event_open(instructions:k): %v (kernel.perf_event_paranoid above 1 hides kernel counts: sysctl kernel.perf_event_paranoid=1)", err)
	}
	return &perfCounter{user: u, kernel: k}, nil
}

// perfOpen opens a disabled instruction counter on the calling thread,
// counting user mode (user) or kernel mode only.
func perfOpen(user bool) (int, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_HARDWARE,
		Config: unix.PERF_COUNT_HW_INSTRUCTIONS,
		Bits:   unix.PerfBitDisabled | unix.PerfBitExcludeHv,
	}
	attr.Size = uint32(binary.Size(attr))
	if user {
		attr.Bits |= unix.PerfBitExcludeKernel
	} else {
		attr.Bits |= unix.PerfBitExcludeUser
	}
	return unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

func (c *perfCounter) Source() string { return "perf" }

func (c *perfCounter) Reset() error {
	for _, fd := range []int{c.user, c.kernel} {
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_RESET, 0); err != nil {
			return fmt.Errorf("perf reset: %w", err)
		}
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			return fmt.Errorf("perf enable: %w", err)
		}
	}
	return nil
}

func (c *perfCounter) Read() (Counts, error) {
	var n [2]uint64
	for i, fd := range []int{c.user, c.kernel} {
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0); err != nil {
			return Counts{}, fmt.Errorf("perf disable: %w", err)
		}
		var b [8]byte
		if m, err := unix.Read(fd, b[:]); err != nil || m != 8 {
			return Counts{}, fmt.Errorf("perf read: %d bytes, %v", m, err)
		}
		n[i] = binary.NativeEndian.Uint64(b[:])
	}
	return Counts{User: n[0], Kernel: n[1]}, nil
}

func (c *perfCounter) Close() error {
	if c == nil || c.user < 0 {
		return nil
	}
	err := unix.Close(c.user)
	if e := unix.Close(c.kernel); err == nil {
		err = e
	}
	c.user, c.kernel = -1, -1
	return err
}
