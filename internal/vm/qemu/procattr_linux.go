package qemu

import (
	"syscall"
)

// procAttr puts QEMU in its own process group, which keeps a
// terminal's ^C from reaching it directly, and kills it (Pdeathsig) should
// rxevm itself be killed.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
