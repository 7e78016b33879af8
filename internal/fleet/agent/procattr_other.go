//go:build !linux

package agent

import "os/exec"

// childAttrs: off Linux there is no parent-death signal; the deadline
// still kills the child itself.
func childAttrs(cmd *exec.Cmd) {}
