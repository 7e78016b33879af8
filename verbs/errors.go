package verbs

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
)

// Error is the error returned by every call of this package that fails,
// and by the module's rdma_cm calls. It carries the rdma-core operation
// and, where there is one, the syscall.Errno.
type Error struct {
	// Op names the libibverbs or librdmacm call (or the package
	// operation) that failed, with its object where that helps:
	// "ibv_open_device rxe9", "rdma_resolve_addr 192.168.77.9:7471".
	Op string
	// Err is the cause: a syscall.Errno where rdma-core gave one, else one
	// of this package's sentinels or os.ErrDeadlineExceeded / os.ErrClosed.
	Err error
	// Detail is an optional hint appended to the message.
	Detail string
}

func (e *Error) Error() string {
	s := "verbs: " + e.Op
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether the errno in e matches target: os.ErrNotExist for
// ENOENT, ENODEV and EADDRNOTAVAIL (an IP address on no RDMA device),
// os.ErrPermission for EPERM and EACCES, errors.ErrUnsupported for ENOSYS
// and EOPNOTSUPP, ErrInUse for EBUSY. A passed deadline
// (os.ErrDeadlineExceeded) matches context.DeadlineExceeded too. Other
// targets are matched through Unwrap.
func (e *Error) Is(target error) bool {
	if e.Err == os.ErrDeadlineExceeded && target == context.DeadlineExceeded {
		return true
	}
	errno, ok := e.Err.(syscall.Errno)
	if !ok {
		return false
	}
	switch target {
	case os.ErrNotExist:
		return errno == syscall.ENOENT || errno == syscall.ENODEV || errno == syscall.EADDRNOTAVAIL
	case os.ErrPermission:
		return errno == syscall.EPERM || errno == syscall.EACCES
	case errors.ErrUnsupported:
		return errno == syscall.ENOSYS || errno == syscall.EOPNOTSUPP
	case ErrInUse:
		return errno == syscall.EBUSY
	}
	return false
}

var (
	// ErrQPState is the cause of a post on a queue pair that is not in a
	// state that allows it: sends need RTS, receives INIT or later. The check
	// is made in Go from the state the QP was last moved to.
	ErrQPState = errors.New("queue pair not in the required state")

	// ErrInUse is the cause when closing an object that still has open
	// children (a PD with MRs, QPs or AHs; a CQ used by a QP; ...). It also
	// matches EBUSY from libibverbs.
	ErrInUse = errors.New("object in use by open children")
)

// errUnsupported is returned by every constructor when the package is built
// without cgo or off Linux.
var errUnsupported = &Error{
	Op:  "requires cgo and libibverbs (CGO_ENABLED=1, apt-get install libibverbs-dev)",
	Err: errors.ErrUnsupported,
}

func errno(op string, e syscall.Errno) error {
	if e == 0 {
		e = syscall.EIO
	}
	return &Error{Op: op, Err: e}
}

// errRet turns a libibverbs return value that is an errno into an error.
func errRet(op string, rc int) error {
	if rc == 0 {
		return nil
	}
	return &Error{Op: op, Err: rdmacore.Errno(rc)}
}

func errClosed(op string) error {
	return &Error{Op: op, Err: os.ErrClosed}
}
