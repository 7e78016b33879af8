package rdmalat

import (
	"errors"
	"syscall"
)

var (
	// ErrTimeout: a wait on the peer or on a completion lasted longer than
	// the configured timeout.
	ErrTimeout = errors.New("rdmalat: timed out")
	// ErrOrder: a round trip's counter did not arrive in order.
	ErrOrder = errors.New("rdmalat: round trip out of order")
	// ErrStopped: the loop was told to stop.
	ErrStopped = errors.New("rdmalat: stopped")
)

func errnoErr(n int) error {
	if n < 0 {
		n = -n
	}
	return syscall.Errno(n)
}
