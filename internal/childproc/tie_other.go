//go:build !linux

package childproc

import "syscall"

// tied: off Linux there is no parent-death signal; a group of its own is
// all there is to set.
func tied(group bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: group} }
