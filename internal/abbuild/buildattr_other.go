//go:build !linux

package abbuild

import "syscall"

// buildAttr puts a build in its own process group; without Linux's
// parent-death signal a build outlives an rdmaab killed with SIGKILL.
func buildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
