package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestTwoNodePeerCompletionError: a real error completion on rdmapeer's
// receive queue (its receives shortened to 16 bytes, the client's SENDs
// 64) crosses the wire as an Error of CodeCompletion, and the client's
// error matches the peer's status by errors.Is and errors.As as a local
// completion's would, naming the peer.
func TestTwoNodePeerCompletionError(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeerEnv(t, peerDev, []string{recvLenEnv + "=16"})
	cpus, err := rdmalat.DefaultCPUs()
	require.NoError(t, err)
	p, err := rdmalat.DialPeer(t.Context(), pp.addr, rdmalat.RemoteConfig{
		Endpoint: rdmalat.EndpointConfig{Device: dev, GIDIndex: -1, MaxSize: 64, Inline: -1, Op: rdmalat.OpSend},
		CPU:      cpus[0], Timeout: 5 * time.Second,
	})
	require.NoError(t, err)
	defer p.Close()
	// The first SEND fails, in the warm-up: Start's error holds the
	// peer's completion, then this side's.
	r, err := p.Start(64, 10)
	require.Error(t, err, "a 64-byte SEND into a 16-byte receive must fail")
	require.Nil(t, r)
	t.Logf("Start's error: %v", err)

	var pe *oob.Error
	require.True(t, errors.As(err, &pe), "the peer's Error is in the chain: %v", err)
	assert.Equal(t, oob.CodeCompletion, pe.Code)
	assert.True(t, pe.RecvQueue, "the peer's receive queue failed")
	status := verbs.WCStatus(pe.WCStatus)
	assert.NotEqual(t, verbs.WCSuccess, status)
	assert.ErrorIs(t, err, status, "matches the peer's status as a local completion would")
	// The IB spec has the receiver see LOC_LEN_ERR; rxe (Linux 6.1)
	// reports LOC_QP_OP_ERR there, and REM_OP_ERR at the sender.
	assert.Contains(t, []verbs.WCStatus{verbs.WCLocLenErr, verbs.WCLocQPOpErr}, status, "status %d (%v)", pe.WCStatus, status)
	var ve *verbs.Error
	require.True(t, errors.As(err, &ve))
	assert.Equal(t, "rdmapeer's work completion on its receive queue", ve.Op)
	assert.Equal(t, status, ve.Err)
	msg := err.Error()
	assert.Contains(t, msg, "rdmapeer at "+pp.addr)
	assert.Contains(t, msg, "rdmapeer ("+peerDev+"): rdmalat: responder: verbs: responder's send work completion on the receive queue")
	assert.True(t, strings.HasPrefix(msg, "two-node session with rdmapeer at "), "the peer's account, the cause, comes first: %v", err)
	assert.Contains(t, msg, "an error completion on the peer's node, not this one")
	assert.True(t, strings.Contains(msg, "initiator on "+dev) || strings.Count(msg, "rdmapeer's work completion") == 1,
		"this side's own completion, or the peer's alone once: %v", err)

	_, err = p.Start(64, 0)
	assert.ErrorContains(t, err, "has ended")
	pp.log.wait(t, 10*time.Second, "session ", "result=error")
}
