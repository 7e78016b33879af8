package main

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/peer"
)

// TestIdleFlag: -idle takes a duration or none (no limit), and refuses 0,
// which the config would read as its default and a user as "none".
func TestIdleFlag(t *testing.T) {
	for args, want := range map[string]time.Duration{"": peer.DefaultIdle, "-idle=none": peer.NoIdleLimit, "-idle=30m": 30 * time.Minute} {
		o, err := parseFlags(strings.Fields(args), func(string) string { return "" }, &bytes.Buffer{})
		if assert.NoError(t, err, args) {
			assert.Equal(t, want, o.idle, args)
		}
	}
	for _, bad := range []string{"-idle=0", "-idle=-1s", "-idle=soon"} {
		_, err := parseFlags([]string{bad}, func(string) string { return "" }, &bytes.Buffer{})
		assert.ErrorContains(t, err, "want a positive duration such as 30m, or none for no limit", bad)
	}
}

// TestTwoNodeIdleConnections: 12 TCP connections that never send a Hello
// hold none of rdmapeer's 4 session slots: a real client from the same
// address is served while they are all open (16 in their handshake per
// address are allowed). (Under TCG a session takes seconds, so the handshake
// deadline is long here; peer's host tests check the 2 s drop.)
func TestTwoNodeIdleConnections(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev, "-max-sessions", "4", "-handshake-timeout", "2m")
	for range 12 {
		nc, err := net.Dial("tcp", pp.addr)
		require.NoError(t, err)
		defer nc.Close()
	}
	start := time.Now()
	p := dialPeer(t, pp.addr, dev, 4096, 5*time.Second)
	dialed := time.Since(start)
	s, ran := runRoundTrips(t, p, 64, 20, 200)
	assert.Equal(t, int64(200), s.Count)
	require.NoError(t, p.Close())
	line := pp.log.wait(t, 10*time.Second, "session ", "result=")
	assert.Contains(t, line, fmt.Sprintf("runs=1 round-trips=%d ", ran))
	assert.Contains(t, line, "result=ok")
	assert.NotContains(t, pp.log.String(), "busy")
	assert.NotContains(t, pp.log.String(), "rejected", "the 12 were all still open")
	t.Logf("dial with 12 idle connections open: %v; session of %d round trips: %v", dialed.Round(time.Millisecond), ran, time.Since(start).Round(time.Millisecond))
}
