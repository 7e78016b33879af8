//go:build !linux

package env

import (
	"errors"
	"runtime"
)

// AllowedCPUs returns the CPUs this process may run on; off Linux there is
// no affinity mask to read.
func AllowedCPUs() ([]int, error) {
	return nil, errors.New("reading the CPU affinity mask is not supported on " + runtime.GOOS + "/" + runtime.GOARCH + " (rdmabench measures on Linux); set " + VarCPUs + "=none")
}

// SetAffinity fails: pinning a thread to a CPU is not supported off Linux.
func SetAffinity(tid, cpu int) error {
	return errors.New("pinning a thread to a CPU is not supported on " + runtime.GOOS + "/" + runtime.GOARCH + "; set " + VarCPUs + "=none")
}
