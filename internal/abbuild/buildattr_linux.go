package abbuild

import "syscall"

// buildAttr puts a build in its own process group and kills it should
// rdmaab die first.
func buildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
