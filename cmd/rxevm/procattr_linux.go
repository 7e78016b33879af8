package main

import "syscall"

// qemuProcAttr puts QEMU in its own process group, which keeps a
// terminal's ^C from reaching it directly, and kills it (Pdeathsig) should
// rxevm itself be killed.
func qemuProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
