package work

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakePerf stands in for the kernel's perf events: each open gives a
// descriptor whose event counts what the test sets while it is enabled.
type fakePerf struct {
	openErr []error // the error of the i-th open, if any
	opens   int
	events  map[int]*fakeEvent
	closed  []int
	ioctls  []string
	readErr error
	short   bool // reads give 8 bytes, as without the read format
}

type fakeEvent struct {
	attr                      unix.PerfEventAttr
	enabled                   bool
	value, enabledNs, running uint64
}

func (f *fakePerf) open(attr *unix.PerfEventAttr) (int, error) {
	i := f.opens
	f.opens++
	if i < len(f.openErr) && f.openErr[i] != nil {
		return -1, f.openErr[i]
	}
	if f.events == nil {
		f.events = map[int]*fakeEvent{}
	}
	fd := 10 + i
	f.events[fd] = &fakeEvent{attr: *attr}
	return fd, nil
}

func (f *fakePerf) ioctl(fd int, req uint) error {
	e := f.events[fd]
	if e == nil {
		return unix.EBADF
	}
	switch req {
	case unix.PERF_EVENT_IOC_RESET:
		f.ioctls = append(f.ioctls, "reset")
		e.value = 0
	case unix.PERF_EVENT_IOC_ENABLE:
		f.ioctls = append(f.ioctls, "enable")
		e.enabled = true
	case unix.PERF_EVENT_IOC_DISABLE:
		f.ioctls = append(f.ioctls, "disable")
		e.enabled = false
	default:
		return unix.EINVAL
	}
	return nil
}

func (f *fakePerf) read(fd int, b []byte) (int, error) {
	if f.readErr != nil {
		return 0, f.readErr
	}
	e := f.events[fd]
	binary.NativeEndian.PutUint64(b, e.value)
	if f.short {
		return 8, nil
	}
	binary.NativeEndian.PutUint64(b[8:], e.enabledNs)
	binary.NativeEndian.PutUint64(b[16:], e.running)
	return 24, nil
}

func (f *fakePerf) close(fd int) error {
	f.closed = append(f.closed, fd)
	return nil
}

// count makes the enabled events count n instructions each, user first,
// over enabled ns of which they ran running.
func (f *fakePerf) count(user, kernel, enabled, running uint64) {
	for fd, n := range map[int]uint64{10: user, 11: kernel} {
		if e := f.events[fd]; e != nil && e.enabled {
			e.value += n
			e.enabledNs, e.running = enabled, running
		}
	}
}

func TestPerfCounts(t *testing.T) {
	f := &fakePerf{}
	c, err := openPerfWith(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source() != "perf" {
		t.Errorf("source %q, want perf", c.Source())
	}
	// The events: instructions, one per mode, disabled until Reset, with
	// the times that show multiplexing.
	for fd, exclude := range map[int]uint64{10: unix.PerfBitExcludeKernel, 11: unix.PerfBitExcludeUser} {
		a := f.events[fd].attr
		if a.Type != unix.PERF_TYPE_HARDWARE || a.Config != unix.PERF_COUNT_HW_INSTRUCTIONS {
			t.Errorf("event %d: type %d config %d, want hardware instructions", fd, a.Type, a.Config)
		}
		if a.Bits&exclude == 0 || a.Bits&unix.PerfBitDisabled == 0 || a.Bits&(unix.PerfBitExcludeKernel|unix.PerfBitExcludeUser) != exclude {
			t.Errorf("event %d: bits %#x, want disabled and only %#x excluded", fd, a.Bits, exclude)
		}
		if a.Read_format != unix.PERF_FORMAT_TOTAL_TIME_ENABLED|unix.PERF_FORMAT_TOTAL_TIME_RUNNING {
			t.Errorf("event %d: read format %#x, want the enabled and running times", fd, a.Read_format)
		}
	}
	f.count(999, 999, 1, 1) // before Reset: not enabled, not counted
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	f.count(829_000, 28_726_000, 5e6, 5e6)
	n, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n != (Counts{User: 829_000, Kernel: 28_726_000}) {
		t.Errorf("counts %+v, want user 829000 kernel 28726000", n)
	}
	if got := strings.Join(f.ioctls, " "); got != "reset enable reset enable disable disable" {
		t.Errorf("ioctls %q: want each event reset and enabled, then disabled to read", got)
	}
	// Per operation, as a benchmark's line carries them: user and kernel
	// only (a hardware counter has no kernel-wait or kernel-other).
	m := n.PerOp(1000, c.Source())
	if len(m) != 2 || m[0] != (Metric{829, UnitUser}) || m[1] != (Metric{28726, UnitKernel}) {
		t.Errorf("metrics %v, want 829 %s and 28726 %s", m, UnitUser, UnitKernel)
	}
	if err := c.Close(); err != nil || len(f.closed) != 2 {
		t.Errorf("close: %v, closed %v, want both", err, f.closed)
	}
	if err := c.Close(); err != nil || len(f.closed) != 2 {
		t.Errorf("second close: %v, closed %v, want nothing more", err, f.closed)
	}
}

// resetPerf opens a counter on a fake source and resets it.
func resetPerf(t *testing.T) (*fakePerf, Counter) {
	t.Helper()
	f := &fakePerf{}
	c, err := openPerfWith(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	return f, c
}

// TestPerfMultiplexed: a count from an event that ran part of the time it
// was enabled is scaled up, as perf stat scales it.
func TestPerfMultiplexed(t *testing.T) {
	f, c := resetPerf(t)
	f.count(1000, 3000, 4e6, 1e6) // ran a quarter of the time
	n, err := c.Read()
	if err != nil || n != (Counts{User: 4000, Kernel: 12000}) {
		t.Errorf("multiplexed: %+v %v, want 4000 and 12000", n, err)
	}
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	f.count(0, 0, 4e6, 0) // never ran
	if _, err := c.Read(); !errors.Is(err, ErrNotCounted) {
		t.Errorf("never ran: %v, want ErrNotCounted", err)
	}
}

func TestParsePerfRead(t *testing.T) {
	rec := func(v ...uint64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.NativeEndian.PutUint64(b[8*i:], x)
		}
		return b
	}
	for _, k := range []struct {
		b    []byte
		want uint64
		err  error
	}{
		{rec(500, 10, 10), 500, nil},
		{rec(500, 10, 5), 1000, nil},
		{rec(0, 0, 0), 0, nil},
		{rec(7, 10, 11), 7, nil}, // running past enabled: rounding, not scaled down
		{rec(500, 10, 0), 0, ErrNotCounted},
		{rec(500), 0, ErrMalformed},
		{nil, 0, ErrMalformed},
	} {
		got, err := parsePerfRead(k.b)
		if got != k.want || !errors.Is(err, k.err) {
			t.Errorf("parsePerfRead(%v) = %d, %v; want %d, %v", k.b, got, err, k.want, k.err)
		}
	}
}

// TestPerfUnavailable: why there is no hardware counter, in words that say
// what to do, and nothing left open.
func TestPerfUnavailable(t *testing.T) {
	for _, k := range []struct {
		errs []error
		want []string
	}{
		{[]error{unix.EACCES}, []string{"instructions:u", "perf_event_paranoid=2 or lower"}},
		{[]error{unix.ENOENT}, []string{"instructions:u", "without a virtual PMU"}},
		{[]error{unix.EOPNOTSUPP}, []string{"without a virtual PMU"}},
		{[]error{unix.ENOSYS}, []string{"CONFIG_PERF_EVENTS"}},
		{[]error{unix.EINVAL}, []string{"no readable PMU"}},
		{[]error{nil, unix.EACCES}, []string{"instructions:k", "perf_event_paranoid=1"}},
	} {
		f := &fakePerf{openErr: k.errs}
		c, err := openPerfWith(f)
		if err == nil || c != nil {
			t.Fatalf("%v: a counter, want an error", k.errs)
		}
		for _, w := range k.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", k.errs, err, w)
			}
		}
		if !errors.Is(err, k.errs[len(k.errs)-1]) {
			t.Errorf("%v: %v does not wrap the system's error", k.errs, err)
		}
		if len(k.errs) == 2 && (len(f.closed) != 1 || f.closed[0] != 10) {
			t.Errorf("%v: closed %v after the kernel event failed, want the user event's", k.errs, f.closed)
		}
	}
}

// TestPerfErrors: a failing ioctl or read is an error naming the step.
func TestPerfErrors(t *testing.T) {
	f, c := resetPerf(t)
	f.readErr = unix.EIO
	if _, err := c.Read(); err == nil || !strings.Contains(err.Error(), "perf read") || !errors.Is(err, unix.EIO) {
		t.Errorf("read failing: %v, want a perf read error wrapping EIO", err)
	}
	f.readErr, f.short = nil, true
	if _, err := c.Read(); !errors.Is(err, ErrMalformed) {
		t.Errorf("8-byte read: %v, want ErrMalformed", err)
	}
	c.Close()
	if err := c.Reset(); err == nil || !strings.Contains(err.Error(), "perf reset") {
		t.Errorf("reset on closed events: %v, want a perf reset error", err)
	}
}
