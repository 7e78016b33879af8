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
	r, err := p.Start(64, 10)
	require.NoError(t, err)
	var runErr error
	for range 100 {
		if _, runErr = r.Next(); runErr != nil {
			break
		}
	}
	require.Error(t, runErr, "a 64-byte SEND into a 16-byte receive must fail")
	t.Logf("the run's error: %v", runErr)
	err = r.Close()
	require.Error(t, err, "Close returns the peer's account of the failure")
	t.Logf("Close's error: %v", err)

	var pe *oob.Error
	require.True(t, errors.As(err, &pe), "the peer's Error is in the chain: %v", err)
	assert.Equal(t, oob.CodeCompletion, pe.Code)
	assert.True(t, pe.RecvQueue, "the peer's receive queue failed")
	status := verbs.WCStatus(pe.WCStatus)
	assert.NotEqual(t, verbs.WCSuccess, status)
	assert.ErrorIs(t, err, status, "matches the peer's status as a local completion would")
	// rxe answers a SEND over the receive with a length error on the
	// receiver's side (IB spec class C: LOC_LEN_ERR there, REM_INV_REQ_ERR
	// at the sender).
	assert.Contains(t, []verbs.WCStatus{verbs.WCLocLenErr, verbs.WCRemInvReqErr}, status, "status %d (%v)", pe.WCStatus, status)
	var ve *verbs.Error
	require.True(t, errors.As(err, &ve))
	assert.Equal(t, "rdmapeer's work completion on its receive queue", ve.Op)
	assert.Equal(t, status, ve.Err)
	msg := err.Error()
	assert.Contains(t, msg, "rdmapeer at "+pp.addr)
	assert.Contains(t, msg, "rdmapeer ("+peerDev+"): verbs: responder's send work completion on the receive queue")
	assert.Contains(t, msg, "an error completion on the peer's node, not this one")
	assert.True(t, strings.Contains(runErr.Error(), "rdmapeer") || errors.Is(runErr, verbs.WCRemInvReqErr) || errors.Is(runErr, verbs.WCRetryExcErr),
		"the run's own error is the peer's or this side's completion: %v", runErr)

	_, err = p.Start(64, 0)
	assert.ErrorContains(t, err, "has ended")
	pp.log.wait(t, 10*time.Second, "session ", "result=error")
}
