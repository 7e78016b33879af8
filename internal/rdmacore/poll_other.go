//go:build !linux

package rdmacore

import (
	"errors"
	"fmt"
	"runtime"
)

// WaitReadable is unsupported off Linux: no RDMA channel exists there.
func WaitReadable(fd int, timeoutMs int) error {
	return fmt.Errorf("rdmacore: waiting on a channel on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}
