//go:build !linux

package segment

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socketpairCloexec makes a connected AF_UNIX pair and marks both ends
// close-on-exec; ForkLock keeps a concurrent exec from inheriting them
// in between (there is no SOCK_CLOEXEC here).
func socketpairCloexec(typ int) ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	return fds, err
}
