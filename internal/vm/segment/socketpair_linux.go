package segment

import (
	"golang.org/x/sys/unix"
)

// socketpairCloexec makes a connected AF_UNIX pair whose ends no other
// child inherits by accident (QEMU is handed its end explicitly).
func socketpairCloexec(typ int) ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
}
