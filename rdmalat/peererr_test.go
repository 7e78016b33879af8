package rdmalat

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestFromPeer: an Error of CodeCompletion from the peer matches its
// status and is a *verbs.Error, as a local completion's error is, and says
// that it happened on the peer; other errors pass unchanged.
func TestFromPeer(t *testing.T) {
	pe := &oob.Error{Code: oob.CodeCompletion, Msg: "rdmapeer (rxe0): verbs: responder's send work completion on the receive queue: local length error (this side: ...)",
		WCStatus: uint32(verbs.WCLocLenErr), VendorErr: 0x81, RecvQueue: true}
	err := sessionErr("192.168.77.1:18515", fmt.Errorf("two-node run: %w", pe))
	require.ErrorIs(t, err, verbs.WCLocLenErr)
	assert.NotErrorIs(t, err, verbs.WCRemInvReqErr)
	var ve *verbs.Error
	require.True(t, errors.As(err, &ve))
	assert.Equal(t, "rdmapeer's work completion on its receive queue", ve.Op)
	assert.Equal(t, "vendor error 0x81", ve.Detail)
	var got *oob.Error
	require.True(t, errors.As(err, &got), "the peer's own Error stays in the chain")
	assert.Equal(t, pe, got)
	assert.Contains(t, err.Error(), "two-node session with rdmapeer at 192.168.77.1:18515: two-node run: peer: rdmapeer (rxe0): verbs: responder's")
	assert.Contains(t, err.Error(), "an error completion on the peer's node, not this one")
	assert.Equal(t, err, fromPeer(err), "made once")

	send := fromPeer(&oob.Error{Code: oob.CodeCompletion, WCStatus: uint32(verbs.WCRetryExcErr)})
	require.True(t, errors.As(send, &ve))
	assert.Equal(t, "rdmapeer's work completion on its send queue", ve.Op)
	assert.Empty(t, ve.Detail)
	assert.ErrorIs(t, send, verbs.WCRetryExcErr)

	other := &oob.Error{Code: oob.CodeInternal, Msg: "x"}
	assert.Same(t, other, fromPeer(other).(*oob.Error))
	assert.False(t, isCompletion(other))
	assert.True(t, isCompletion(fmt.Errorf("run: %w", &verbs.Error{Op: "work completion", Err: verbs.WCRemInvReqErr})))
}
