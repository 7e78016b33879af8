package loops

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestCompletionError: an error completion of a loop becomes a
// *verbs.Error that matches its status and says the operation, the side,
// the queue, the vendor's code and whom the status blames.
func TestCompletionError(t *testing.T) {
	err := completionError(spec.Write, "initiator", false, verbs.WCRetryExcErr, 0x81)
	require.ErrorIs(t, err, verbs.WCRetryExcErr)
	assert.NotErrorIs(t, err, verbs.WCRemAccessErr)
	var ve *verbs.Error
	require.True(t, errors.As(err, &ve))
	assert.Equal(t, "initiator's write work completion on the send queue", ve.Op)
	assert.Equal(t, "verbs: initiator's write work completion on the send queue: "+verbs.WCRetryExcErr.String()+
		" (vendor error 0x81; the peer or the path: no acknowledgement within the retries, the peer's queue pair gone or in error, or packets lost)", err.Error())

	// A responder's receive, no vendor code: the blame alone.
	err = completionError(spec.Send, "responder", true, verbs.WCLocLenErr, 0)
	require.ErrorIs(t, err, verbs.WCLocLenErr)
	assert.Contains(t, err.Error(), "responder's send work completion on the receive queue: ")
	assert.Contains(t, err.Error(), "(this side: a message longer than the receive buffer")
	assert.NotContains(t, err.Error(), "vendor error")
	var c *Completion
	require.True(t, errors.As(err, &c), "the facts rdmapeer sends its client")
	assert.Equal(t, Completion{Status: verbs.WCLocLenErr, Recv: true}, *c)

	// A status without a blame, and no role (setting up): only the vendor code.
	err = completionError(spec.Read, "", false, verbs.WCGeneralErr, 7)
	require.ErrorIs(t, err, verbs.WCGeneralErr)
	assert.Contains(t, err.Error(), "verbs: read work completion on the send queue: ")
	assert.Contains(t, err.Error(), "(vendor error 0x7)")

	// Every status the loops can meet that blames a side names it.
	for _, s := range []verbs.WCStatus{verbs.WCRemAccessErr, verbs.WCRemInvReqErr, verbs.WCRemOpErr, verbs.WCRNRRetryExcErr, verbs.WCBadRespErr} {
		assert.Contains(t, completionError(spec.Send, "initiator", false, s, 0).Error(), "the peer", "%v", s)
	}
	for _, s := range []verbs.WCStatus{verbs.WCLocLenErr, verbs.WCLocQPOpErr, verbs.WCLocProtErr, verbs.WCLocAccessErr} {
		assert.Contains(t, completionError(spec.Send, "initiator", false, s, 0).Error(), "this side", "%v", s)
	}
}
