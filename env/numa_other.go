//go:build !linux

package env

import (
	"fmt"
	"runtime"
)

// BindThreadMemory locks the calling goroutine to its OS thread; binding
// memory to a node is not supported off Linux (the zero Node asks for
// none).
func (n Node) BindThreadMemory() (restore func(), err error) {
	if n.set {
		return nil, fmt.Errorf("binding memory to NUMA node %d is not supported on %s/%s; set %s=off", n.id, runtime.GOOS, runtime.GOARCH, VarNUMA)
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread, nil
}

// PageNodes is not supported off Linux.
func PageNodes(b []byte) ([]int, error) {
	return nil, fmt.Errorf("move_pages is not supported on %s/%s", runtime.GOOS, runtime.GOARCH)
}
