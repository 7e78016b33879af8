//go:build !linux

package perftestcmp

import (
	"fmt"
	"os/exec"
	"runtime"
)

// startPinned starts cmd; pinning it (cpu >= 0) needs Linux.
func startPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	return fmt.Errorf("pinning perftest to CPU %d is not supported on %s/%s: run with -pin=false", cpu, runtime.GOOS, runtime.GOARCH)
}
