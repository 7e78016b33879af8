//go:build !linux

package qemu

import (
	"syscall"
)

// procAttr puts QEMU in its own process group, which keeps a
// terminal's ^C from reaching it directly; off Linux there is no
// parent-death signal.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
