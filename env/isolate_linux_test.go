package env

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestKeepOthersOff: while a run measures, the process's other threads
// leave the polling CPU; the polling thread stays; restore puts all back.
func TestKeepOthersOff(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skipf("skipping: needs two CPUs to move threads between, this process may use %v", cpus)
	}
	poll := cpus[len(cpus)-1]
	type thread struct {
		tid  chan int
		done chan struct{}
	}
	start := func(pin CPU) thread {
		th := thread{make(chan int), make(chan struct{})}
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			restore, err := pin.PinThread()
			if err != nil {
				t.Error(err)
			} else {
				defer restore()
			}
			th.tid <- unix.Gettid()
			<-th.done
		}()
		return th
	}
	poller, other := start(PinTo(poll)), start(CPU{})
	pTID, oTID := <-poller.tid, <-other.tid
	defer close(poller.done)
	defer close(other.done)
	mask := func(tid int) unix.CPUSet {
		var m unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := mask(oTID)

	restore := KeepOthersOff(PinTo(poll))
	if m := mask(oTID); m.IsSet(poll) || m.Count() != before.Count()-1 {
		t.Errorf("other thread's mask while measuring: %v, want %v without CPU %d", m, before, poll)
	}
	if m := mask(pTID); m.Count() != 1 || !m.IsSet(poll) {
		t.Errorf("polling thread's mask: %v, want CPU %d alone", m, poll)
	}
	restore()
	if m := mask(oTID); m != before {
		t.Errorf("other thread's mask after restore: %v, want %v", m, before)
	}
	if m := mask(unix.Gettid()); m != before {
		t.Errorf("this thread's mask after restore: %v, want %v", m, before)
	}

	// Every allowed CPU polling: nothing to move them to, nothing moved.
	var all []CPU
	for _, c := range cpus {
		all = append(all, PinTo(c))
	}
	restore = KeepOthersOff(all...)
	if m := mask(oTID); m != before {
		t.Errorf("with every CPU polling, other thread's mask %v, want %v", m, before)
	}
	restore()
	KeepOthersOff(CPU{})() // unpinned: nothing at all
}
