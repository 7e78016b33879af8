package rdmacm

import (
	"errors"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
	"github.com/rdmabench/rdmabench/verbs"
)

// Error is the error of every call of this package that fails: verbs'
// one error type of an rdma-core call. Its Op names the librdmacm call or
// the CM event awaited ("rdma_resolve_addr 192.168.77.9:7471", "waiting
// for RDMA_CM_EVENT_CONNECT_RESPONSE"); its Err is a syscall.Errno where
// librdmacm or the CM gave one, os.ErrDeadlineExceeded when a deadline
// passed (it matches context.DeadlineExceeded too), os.ErrClosed,
// errors.ErrUnsupported, or context.Canceled.
type Error = verbs.Error

// errUnsupported is returned by every constructor when the package is built
// without cgo or off Linux.
var errUnsupported = &Error{
	Op:  "requires cgo and librdmacm (CGO_ENABLED=1, apt-get install librdmacm-dev)",
	Err: errors.ErrUnsupported,
}

// errRet turns an errno returned by the C wrappers (negative) into an
// error.
func errRet(op string, rc int) error {
	if rc == 0 {
		return nil
	}
	return &Error{Op: op, Err: rdmacore.Errno(rc)}
}
