//go:build !linux

package abrun

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// turnSocketpair makes the conductor's connected pair for one side, close
// on exec; ForkLock keeps a concurrent exec from inheriting it in between.
func turnSocketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	return fds, err
}

// startFixedLayout starts cmd; a fixed address-space layout (fixed) needs
// Linux's personality(2).
func startFixedLayout(cmd *exec.Cmd, fixed bool) error {
	if !fixed {
		return cmd.Start()
	}
	return fmt.Errorf("-aslr=false is not supported on %s/%s: leave -aslr at its default", runtime.GOOS, runtime.GOARCH)
}

// disableTHP does nothing: transparent huge pages are Linux's.
func disableTHP() error { return nil }
