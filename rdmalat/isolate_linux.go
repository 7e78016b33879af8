package rdmalat

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// keepOthersOff moves every other thread of this process off cpus, the
// CPUs the busy-polling initiator and responder are pinned to, for as long
// as a run measures. Without it the Go runtime's own threads (sysmon, the
// thread that takes over the P while the initiator is in C, the garbage
// collector's workers, the testing framework's timer) can be scheduled
// onto a polling thread's CPU and preempt it mid round trip; perftest's
// two single-threaded processes never see that. A thread pinned to one of
// cpus (the polling threads themselves) is left alone; threads the runtime
// starts meanwhile are cloned by its template thread (a locked thread
// never clones itself), which is moved too, so they inherit the narrower
// mask. Where no CPU would be left (every allowed CPU polls) nothing is
// moved. The returned function gives each moved thread its mask back, and
// threads started meanwhile the process's; it is safe to call once.
func keepOthersOff(cpus []int) (restore func()) {
	var polling unix.CPUSet
	for _, c := range cpus {
		if c >= 0 {
			polling.Set(c)
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
			if c >= 0 {
				n.Clear(c)
			}
		}
		if n.Count() == 0 || n == m {
			continue
		}
		if unix.SchedSetaffinity(tid, &n) == nil {
			moved[tid] = m
			if !haveBase {
				base, narrow, haveBase = m, n, true
			}
		}
	}
	return func() {
		for _, tid := range threads() {
			if m, ok := moved[tid]; ok {
				_ = unix.SchedSetaffinity(tid, &m) // ESRCH: it ended
				continue
			}
			var m unix.CPUSet
			if haveBase && unix.SchedGetaffinity(tid, &m) == nil && m == narrow {
				_ = unix.SchedSetaffinity(tid, &base)
			}
		}
	}
}

// pinnedWithin reports whether mask m is one CPU of set.
func pinnedWithin(m, set unix.CPUSet) bool {
	if m.Count() != 1 {
		return false
	}
	for c := 0; c < len(m)*64; c++ {
		if m.IsSet(c) {
			return set.IsSet(c)
		}
	}
	return false
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
