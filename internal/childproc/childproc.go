// Package childproc starts the programs the commands run (a build, QEMU,
// a benchmark, rdmapeer, a held command) so that none outlives the
// process that started it: the one place that sets their process
// attributes.
package childproc

import (
	"os/exec"
	"syscall"
)

// Tie makes cmd's process receive SIGKILL when the thread that starts it
// exits (Linux's parent-death signal), so that it never outlives its
// parent, even one killed with SIGKILL, which cannot pass anything on. It
// stays in its parent's process group: a terminal's ^C reaches both. Off
// Linux there is no such signal and Tie changes nothing. Call it before
// cmd.Start; it replaces cmd.SysProcAttr.
func Tie(cmd *exec.Cmd) { cmd.SysProcAttr = tied(false) }

// TieGroup is Tie with cmd in a process group of its own: a terminal's ^C
// does not reach it directly, and for a command made by
// exec.CommandContext (the only kind with a Cancel, which Start refuses
// on any other) cancelling the context kills the whole group, whatever
// cmd started (a compiler, a shell's children), not cmd's process alone.
// Off Linux it does all but the parent-death signal.
func TieGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = tied(true)
	if cmd.Cancel == nil {
		return
	}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
