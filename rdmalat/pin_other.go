//go:build !linux

package rdmalat

import (
	"fmt"
	"runtime"
)

// pinThread locks the calling goroutine to its OS thread; pinning it to a
// CPU is not supported off Linux (cpu < 0 asks for none).
func pinThread(cpu int) (restore func(), err error) {
	if cpu >= 0 {
		return nil, fmt.Errorf("rdmalat: pinning to CPU %d is not supported on %s/%s; set RDMABENCH_CPUS=none", cpu, runtime.GOOS, runtime.GOARCH)
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread, nil
}
