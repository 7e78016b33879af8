//go:build !linux

package main

import "syscall"

// qemuProcAttr puts QEMU in its own process group, which keeps a
// terminal's ^C from reaching it directly; off Linux there is no
// parent-death signal.
func qemuProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
