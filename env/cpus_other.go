//go:build !linux

package env

import (
	"errors"
	"fmt"
	"runtime"
)

// AllowedCPUs returns the CPUs this process may run on; off Linux there is
// no affinity mask to read.
func AllowedCPUs() ([]int, error) {
	return nil, errors.New("reading the CPU affinity mask is not supported on " + runtime.GOOS + "/" + runtime.GOARCH + " (rdmabench measures on Linux); set " + VarCPUs + "=none")
}

// PinThread locks the calling goroutine to its OS thread; pinning it to a
// CPU is not supported off Linux (an unpinned CPU asks for none).
func (c CPU) PinThread() (restore func(), err error) {
	if c.pinned {
		return nil, fmt.Errorf("pinning to CPU %d is not supported on %s/%s; set %s=none", c.id, runtime.GOOS, runtime.GOARCH, VarCPUs)
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread, nil
}

// Pin fails for a pinned c: pinning a thread is not supported off Linux.
func (c CPU) Pin(tid int) error {
	if c.pinned {
		return fmt.Errorf("pinning to CPU %d is not supported on %s/%s; set %s=none", c.id, runtime.GOOS, runtime.GOARCH, VarCPUs)
	}
	return nil
}

// KeepOthersOff has nothing to move where threads cannot be pinned.
func KeepOthersOff(...CPU) (restore func()) { return func() {} }
