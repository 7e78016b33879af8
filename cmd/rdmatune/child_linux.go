package main

import "syscall"

// childAttr makes the held command receive SIGKILL when rdmatune's thread
// that started it exits, so that it never outlives its holder.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
