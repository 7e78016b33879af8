package abrun

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// turnSocketpair makes the conductor's connected pair for one side, close
// on exec so that only the side it is handed to (as fd 3) holds it: a
// copy in the other side's process would keep it open past its owner.
func turnSocketpair() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}

// addrNoRandomize is personality(2)'s ADDR_NO_RANDOMIZE.
const addrNoRandomize = 0x0040000

// startFixedLayout starts cmd, with fixed set without address-space
// randomization (as setarch -R does): personality(2) is a property of the
// thread, inherited by the child it forks, so the flag is set on this
// locked thread around the fork only.
func startFixedLayout(cmd *exec.Cmd, fixed bool) error {
	if !fixed {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	if errno != 0 {
		return fmt.Errorf("personality: %w", errno)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, old|addrNoRandomize, 0, 0); errno != 0 {
		return fmt.Errorf("personality(ADDR_NO_RANDOMIZE): %w", errno)
	}
	err := cmd.Start()
	unix.RawSyscall(unix.SYS_PERSONALITY, old, 0, 0)
	return err
}

// disableTHP sets PR_SET_THP_DISABLE on this process; the children it
// starts inherit it. Measured in the soft-RoCE VM: A/A duet pairs with
// huge pages allowed spread with a robust sd of 4.0% of p50 (most pairs
// near 0, others at ±4-15%); with them off, 1.1%.
func disableTHP() error {
	return unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0)
}
