package perftestcmp

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// startPinned starts cmd with its CPU mask set to cpu alone (cpu < 0: the
// mask is left as it is), like taskset -c CPU. A child inherits the mask of
// the thread that forks it, so the fork runs on this goroutine's thread,
// locked and pinned for the moment, then restored.
func startPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("pinning %s to CPU %d: %w (-cpus names CPUs this process may use; see taskset -p $$)", filepath.Base(cmd.Path), cpu, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
		// Leave the thread locked: the runtime ends it with this
		// goroutine rather than hand its mask to another.
		return fmt.Errorf("restoring the CPU mask after starting %s: %w", filepath.Base(cmd.Path), rerr)
	}
	runtime.UnlockOSThread()
	return err
}
