package perftestcmp

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/rdmabench/rdmabench/env"
)

// startPinned starts cmd with its CPU mask set to cpu alone (the zero CPU:
// the mask is left as it is), like taskset -c CPU. A child inherits the
// mask of the thread that forks it, so the fork runs on this goroutine's
// thread, locked and pinned for the moment, then restored.
func startPinned(cmd *exec.Cmd, cpu env.CPU) error {
	restore, err := cpu.PinThread()
	if err != nil {
		return fmt.Errorf("starting %s: %w (-cpus chooses the CPUs)", filepath.Base(cmd.Path), err)
	}
	defer restore()
	return cmd.Start()
}
