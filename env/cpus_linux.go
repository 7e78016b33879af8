package env

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// AllowedCPUs returns the CPUs this process may run on (taskset -p), in
// order: the one reading of the affinity mask that the default pinning,
// the check of a CPU choice and the host tools share.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return cpusOf(set), nil
}

func cpusOf(set unix.CPUSet) []int {
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// PinThread locks the calling goroutine to its OS thread and pins that
// thread to c alone (not pinned: it only locks). The returned function
// gives the thread its previous CPU mask back and unlocks it, so that no
// other goroutine inherits the pinning; should the mask not come back, the
// thread stays locked and ends with its goroutine. A goroutine that never
// calls it keeps the thread pinned until it ends. A benchmark function runs
// on a fresh goroutine per call, so it pins inside itself.
func (c CPU) PinThread() (restore func(), err error) {
	runtime.LockOSThread()
	if !c.pinned {
		return runtime.UnlockOSThread, nil
	}
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	if err := c.Pin(0); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		if setMask(0, &old) == nil {
			runtime.UnlockOSThread()
		}
	}, nil
}

// Pin pins thread tid (0: the calling thread, which must be locked to its
// goroutine) to c alone; an unpinned c changes nothing. The error says
// what to check.
func (c CPU) Pin(tid int) error {
	if !c.pinned {
		return nil
	}
	var set unix.CPUSet
	set.Set(c.id)
	var err error = unix.EINVAL // above what a CPUSet holds
	if set.Count() == 1 {
		err = setMask(tid, &set)
	}
	if err != nil {
		return fmt.Errorf("pinning to CPU %d: %w (name CPUs this process may use; see taskset -p $$)", c.id, err)
	}
	return nil
}

// setMask is the one sched_setaffinity call.
func setMask(tid int, set *unix.CPUSet) error { return unix.SchedSetaffinity(tid, set) }

// KeepOthersOff moves every other thread of this process off the CPUs
// that pin in cpus, those of the busy-polling initiator and responder,
// for as long as a run measures. Without it the Go runtime's own threads
// (sysmon, the thread that takes over the P while the initiator is in C,
// the garbage collector's workers, the testing framework's timer) can be
// scheduled onto a polling thread's CPU and preempt it mid round trip;
// perftest's two single-threaded processes never see that. A thread
// pinned to one of cpus (the polling threads themselves) is left alone;
// threads the runtime starts meanwhile are cloned by its template thread
// (a locked thread never clones itself), which is moved too, so they
// inherit the narrower mask. Where no CPU would be left (every allowed
// CPU polls) nothing is moved. The returned function gives each moved
// thread its mask back, and threads started meanwhile the process's; it is
// safe to call once.
func KeepOthersOff(cpus ...CPU) (restore func()) {
	var polling unix.CPUSet
	for _, c := range cpus {
		if c.pinned {
			polling.Set(c.id)
		}
	}
	if polling.Count() == 0 {
		return func() {}
	}
	moved := map[int]unix.CPUSet{}
	var base, narrow unix.CPUSet
	haveBase := false
	for _, tid := range threads() {
		var m unix.CPUSet
		if unix.SchedGetaffinity(tid, &m) != nil || pinnedWithin(m, polling) {
			continue
		}
		n := m
		for _, c := range cpus {
			if c.pinned {
				n.Clear(c.id)
			}
		}
		if n.Count() == 0 || n == m {
			continue
		}
		if setMask(tid, &n) == nil {
			moved[tid] = m
			if !haveBase {
				base, narrow, haveBase = m, n, true
			}
		}
	}
	return func() {
		for _, tid := range threads() {
			if m, ok := moved[tid]; ok {
				_ = setMask(tid, &m) // ESRCH: it ended
				continue
			}
			var m unix.CPUSet
			if haveBase && unix.SchedGetaffinity(tid, &m) == nil && m == narrow {
				_ = setMask(tid, &base)
			}
		}
	}
}

// pinnedWithin reports whether mask m is one CPU of set.
func pinnedWithin(m, set unix.CPUSet) bool {
	if m.Count() != 1 {
		return false
	}
	cpus := cpusOf(m)
	return set.IsSet(cpus[0])
}

// threads returns the thread IDs of this process.
func threads() []int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out
}
