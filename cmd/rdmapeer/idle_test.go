package main

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
)

// TestIdleFlag: -idle 0 means no limit, as its help says; the config's
// zero would mean the default.
func TestIdleFlag(t *testing.T) {
	assert.Equal(t, rdmalat.NoIdleLimit, idleLimit(0))
	assert.Equal(t, 10*time.Minute, idleLimit(10*time.Minute))
}

// TestTwoNodeIdleConnections: 20 TCP connections that never send a Hello
// hold none of rdmapeer's 4 session slots: a real client is served while
// they are open, and rdmapeer drops them after its handshake deadline.
func TestTwoNodeIdleConnections(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev, "-max-sessions", "4")
	idle := make([]net.Conn, 20)
	for i := range idle {
		nc, err := net.Dial("tcp", pp.addr)
		require.NoError(t, err)
		defer nc.Close()
		idle[i] = nc
	}
	opened := time.Now()
	start := time.Now()
	p := dialPeer(t, pp.addr, dev, 4096, 5*time.Second)
	dialed := time.Since(start)
	s, _ := runRoundTrips(t, p, 64, 20, 200)
	assert.Equal(t, int64(200), s.Count)
	require.NoError(t, p.Close())
	assert.Less(t, time.Since(opened), 2*time.Second, "served while all 20 were still open")
	line := pp.log.wait(t, 10*time.Second, "session ", "result=")
	assert.Contains(t, line, "runs=1 round-trips=220 ")
	assert.Contains(t, line, "result=ok")
	assert.NotContains(t, pp.log.String(), "busy")

	// Each idle connection is closed by rdmapeer within its 2 s deadline.
	for _, nc := range idle {
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := io.ReadAll(nc)
		require.NoError(t, err, "closed by rdmapeer, not by our read deadline")
	}
	dropped := time.Since(opened)
	assert.Less(t, dropped, 4*time.Second)
	pp.log.wait(t, 5*time.Second, "rejected: ", "is not an rdmabench client (got no answer within 2s)")
	t.Logf("dial with 20 idle connections open: %v; the 20 dropped after %v", dialed.Round(time.Microsecond), dropped.Round(time.Millisecond))
}
