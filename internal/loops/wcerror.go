package loops

import (
	"fmt"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// completionError is the error of an error completion that a loop of
// operation op saw as role ("initiator" or "responder"): on its receive
// queue (recv, the peer's message) or for its own post. It is a
// *verbs.Error whose cause is the status, as CQ.Poll's are (errors.Is(err,
// verbs.WCRemAccessErr)), carrying the provider's vendor_err (a code only
// its vendor documents, 0 for none) and which side the status blames. The
// completion's opcode is not shown: libibverbs defines only wr_id, status,
// qp_num and vendor_err in an error completion (rxe reports SEND for a
// failed READ); the operation and the queue say what failed.
func completionError(op spec.Op, role string, recv bool, status verbs.WCStatus, vendorErr uint32) error {
	queue := "send"
	if recv {
		queue = "receive"
	}
	what := fmt.Sprintf("%v work completion on the %s queue", op, queue)
	if role != "" {
		what = role + "'s " + what
	}
	detail := statusBlame[status]
	if vendorErr != 0 {
		v := fmt.Sprintf("vendor error %#x", vendorErr)
		if detail != "" {
			v += "; " + detail
		}
		detail = v
	}
	return &verbs.Error{Op: what, Err: &Completion{Status: status, VendorErr: vendorErr, Recv: recv}, Detail: detail}
}

// ShortRecvForTest, when positive, is the length of every receive the
// loops post, in place of Config.RecvLen: a test-only hook, set by
// cmd/rdmapeer's tests in their rdmapeer process before it serves, so that
// a SEND longer than it fails there with a real error completion.
var ShortRecvForTest int

// Completion is the cause of a loop's completion error: the facts that
// rdmapeer sends its client (oob CodeCompletion) so that the client's
// error matches the status as a local one would. It matches its Status
// through Unwrap.
type Completion struct {
	Status    verbs.WCStatus
	VendorErr uint32 // the provider's vendor_err, 0 for none
	Recv      bool   // on the receive queue (the peer's message), else a post of this side's
}

func (c *Completion) Error() string { return c.Status.String() }

// Unwrap returns the status, so errors.Is(err, verbs.WCLocLenErr) works.
func (c *Completion) Unwrap() error { return c.Status }

// statusBlame says which side an error status blames and what to check.
var statusBlame = map[verbs.WCStatus]string{
	verbs.WCLocLenErr:      "this side: a message longer than the receive buffer, or a post over the device's limits",
	verbs.WCLocQPOpErr:     "this side: its queue pair could not carry out the request (rxe also reports a received message longer than the posted receive so)",
	verbs.WCLocProtErr:     "this side: its memory region does not cover the buffer or lacks the access",
	verbs.WCLocAccessErr:   "this side: its memory region lacks the access the operation needs",
	verbs.WCWRFlushErr:     "flushed: the queue pair had already failed, the first error is the cause",
	verbs.WCBadRespErr:     "the peer: an unexpected response",
	verbs.WCRemInvReqErr:   "the peer: it found the request invalid, a message over its receive buffer or an operation its queue pair does not allow",
	verbs.WCRemAccessErr:   "the peer: it refused the access, check the rkey, the address range and its memory region's access flags",
	verbs.WCRemOpErr:       "the peer: it could not carry out the operation (rxe also reports a message longer than the peer's receive buffer so)",
	verbs.WCRetryExcErr:    "the peer or the path: no acknowledgement within the retries, the peer's queue pair gone or in error, or packets lost",
	verbs.WCRNRRetryExcErr: "the peer: it had no receive posted within the retries",
}
