package rdmacm

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// Error is the error of every call of this package that fails. It carries
// the librdmacm call or CM event that failed and the cause.
type Error struct {
	// Op names the call or the step: "rdma_resolve_addr 192.168.77.9:7471",
	// "waiting for RDMA_CM_EVENT_CONNECT_RESPONSE".
	Op string
	// Err is the cause: a syscall.Errno where librdmacm or the CM gave one,
	// os.ErrDeadlineExceeded when a deadline passed, os.ErrClosed,
	// errors.ErrUnsupported, or context.Canceled.
	Err error
	// Detail is an optional hint appended to the message.
	Detail string
}

func (e *Error) Error() string {
	s := "rdmacm: " + e.Op
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

// Is matches the errno in e as the verbs package does: os.ErrNotExist for
// ENOENT, ENODEV and EADDRNOTAVAIL (an address on no RDMA device),
// os.ErrPermission for EPERM and EACCES, errors.ErrUnsupported for ENOSYS and
// EOPNOTSUPP. A passed deadline matches both os.ErrDeadlineExceeded and
// context.DeadlineExceeded. Other targets are matched through Unwrap.
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
	}
	return false
}

// errUnsupported is returned by every constructor when the package is built
// without cgo or off Linux.
var errUnsupported = &Error{
	Op:  "requires cgo and librdmacm (CGO_ENABLED=1, apt-get install librdmacm-dev)",
	Err: errors.ErrUnsupported,
}

// errRet turns a negative errno returned by the C wrappers into an error.
func errRet(op string, rc int) error {
	if rc == 0 {
		return nil
	}
	if rc < 0 {
		rc = -rc
	}
	return &Error{Op: op, Err: syscall.Errno(rc)}
}
