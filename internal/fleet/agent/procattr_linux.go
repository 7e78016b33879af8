package agent

import (
	"os/exec"
	"syscall"
)

// childAttrs makes a child die with the agent (the agent may be killed
// with SIGKILL, which it cannot pass on) and puts it in its own process
// group, so that a deadline kills everything it started.
func childAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
