package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// qemuProcAttr puts QEMU in its own process group, which keeps a
// terminal's ^C from reaching it directly, and kills it (Pdeathsig) should
// rxevm itself be killed.
func qemuProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// socketpairCloexec makes a connected AF_UNIX pair whose ends no other
// child inherits by accident (QEMU is handed its end explicitly).
func socketpairCloexec(typ int) ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
}
