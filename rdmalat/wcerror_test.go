package rdmalat_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestErrorCompletion: a READ with a wrong remote key completes in error;
// the run's error, from inside the C loop, matches the completion status
// and says which side's completion failed, on which queue, and that the status blames the peer. (rxe reports no vendor_err:
// internal/loops' TestCompletionError covers one.)
func TestErrorCompletion(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{Device: c.Device, GIDIndex: c.GIDIndex, Op: spec.Read, MaxSize: 64},
		Timeout:  2 * time.Second,
	})
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Close()) }()
	p.Remote.RKey ^= 0x5a5a00 // a key the responder never registered
	run, err := p.Start(8, 0)
	require.NoError(t, err)
	_, err = run.Next()
	require.Error(t, err)
	t.Log(err)
	assert.ErrorIs(t, err, verbs.WCRemAccessErr)
	var ve *verbs.Error
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "initiator's read work completion on the send queue", ve.Op)
	assert.Contains(t, ve.Detail, "the peer: it refused the access")
	assert.Contains(t, err.Error(), "rdmalat: initiator on "+c.Device+": ")
	_ = run.Close() // repeats the error, or none: the run ended with it
}
