package rdmalat

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// pinThread locks the calling goroutine to its OS thread and pins that
// thread to cpu (cpu < 0: lock only). The returned function restores the
// thread's previous CPU mask and unlocks it, so that no other goroutine
// inherits the pinning. A benchmark function runs on a fresh goroutine per
// call, so it pins inside itself.
func pinThread(cpu int) (restore func(), err error) {
	runtime.LockOSThread()
	if cpu < 0 {
		return runtime.UnlockOSThread, nil
	}
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("rdmalat: sched_getaffinity: %w", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("rdmalat: pinning to CPU %d: %w (RDMABENCH_CPUS names CPUs this process may use; see taskset -p $$)", cpu, err)
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}
