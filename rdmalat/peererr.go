package rdmalat

import (
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/verbs"
)

// peerErrorWait bounds how long a client whose run ended on an error
// completion waits for the peer's own account of it: on RC the peer's
// queue pair usually failed too (the client's REM_INV_REQ_ERR is the
// peer's LOC_LEN_ERR), and its Error says what it saw there.
const peerErrorWait = time.Second

// peerCompletionError is an error completion on rdmapeer's side as the
// client returns it: the peer's words (an *oob.Error of CodeCompletion),
// and a *verbs.Error whose cause is the status, as a local completion's
// is, so that errors.Is(err, verbs.WCLocLenErr) and errors.As(err,
// &*verbs.Error) work. That *verbs.Error's Op begins with "rdmapeer's".
type peerCompletionError struct {
	err error // the whole error, the peer's *oob.Error in its chain
	wc  *verbs.Error
}

func (e *peerCompletionError) Error() string {
	return fmt.Sprintf("%v [%s: an error completion on the peer's node, not this one; "+
		"\"this side\" above means the peer: check rdmapeer's device, its log and its host's dmesg]", e.err, e.wc)
}

func (e *peerCompletionError) Unwrap() []error { return []error{e.err, e.wc} }

// fromPeer returns err with the completion that an Error of CodeCompletion
// in its chain reports made matchable; any other err as it is.
func fromPeer(err error) error {
	var pe *oob.Error
	if !errors.As(err, &pe) || pe.Code != oob.CodeCompletion {
		return err
	}
	var done *peerCompletionError
	if errors.As(err, &done) {
		return err // already made
	}
	queue := "send"
	if pe.RecvQueue {
		queue = "receive"
	}
	wc := &verbs.Error{Op: "rdmapeer's work completion on its " + queue + " queue", Err: verbs.WCStatus(pe.WCStatus)}
	if pe.VendorErr != 0 {
		wc.Detail = fmt.Sprintf("vendor error %#x", pe.VendorErr)
	}
	return &peerCompletionError{err: err, wc: wc}
}

// isCompletion reports whether err is an error completion's.
func isCompletion(err error) bool {
	var st verbs.WCStatus
	return errors.As(err, &st)
}
