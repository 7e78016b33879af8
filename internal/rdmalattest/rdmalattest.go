// Package rdmalattest holds what the tests of more than one package do
// with rdmalat's engines. Only tests import it.
package rdmalattest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
)

// NextAfterPeerGone starts a run of p, completes one round trip, stops
// p's responder (the peer goes away mid-run) and calls Next until it
// fails: it returns that error and how long the failing wait took. The
// run's own timeout (p.Timeout) bounds the wait.
func NextAfterPeerGone(t testing.TB, p *rdmalat.Pair) (time.Duration, error) {
	t.Helper()
	run, err := p.Start(2, 0)
	require.NoError(t, err)
	defer run.Close()
	_, err = run.Next()
	require.NoError(t, err)
	_, err = p.Responder.Stop()
	require.NoError(t, err)
	start := time.Now()
	for err == nil {
		_, err = run.Next()
	}
	return time.Since(start), err
}
