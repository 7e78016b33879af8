package rdmalat_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// These DialPeer tests need no RDMA device: each fails before this side
// opens one. The two-node runs themselves are tested in cmd/rdmapeer, in
// the soft-RoCE VM.

func remoteConfig(timeout time.Duration) rdmalat.RemoteConfig {
	return rdmalat.RemoteConfig{
		Endpoint: rdmalat.EndpointConfig{Device: "nodev0", GIDIndex: -1, MaxSize: 4096, Inline: -1},
		Timeout:  timeout,
	}
}

// TestDialPeerErrors: a bad address, nothing listening, and things that are
// not an rdmapeer each fail fast, with errors that say which.
func TestDialPeerErrors(t *testing.T) {
	closedAddr := rdmalattest.ClosedPort(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	require.NoError(t, err)
	defer silent.Close()
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	webAddr := strings.TrimPrefix(web.URL, "http://")

	for _, tc := range []struct {
		name string
		addr string
		is   error
		want string
	}{ // only the silent listener runs out the 300 ms; the others answer at once, so give them time to on a loaded host
		{"malformed", "nodeB:", oob.ErrAddr, `peer address "nodeB:" has no port; want host:port, e.g. nodeB:18515`},
		{"bad port", "nodeB:70000", oob.ErrAddr, `has port "70000", not a number from 1 to 65535`},
		{"nothing listening", closedAddr, nil, "cannot reach rdmapeer at " + closedAddr + " (is it running there?): connect: connection refused"},
		{"silent", silent.Addr().String(), oob.ErrNotPeer, "is not an rdmapeer (got no answer within 300ms)"},
		{"web server", webAddr, oob.ErrNotPeer, webAddr + " is not an rdmapeer (got "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			timeout := 5 * time.Second
			if tc.name == "silent" {
				timeout = 300 * time.Millisecond
			}
			p, err := rdmalat.DialPeer(t.Context(), tc.addr, remoteConfig(timeout))
			elapsed := time.Since(start)
			assert.Nil(t, p)
			require.Error(t, err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, elapsed, timeout+2*time.Second)
			t.Logf("after %v: %v", elapsed.Round(time.Millisecond), err)
		})
	}
}

// TestDialPeerCancel: cancelling the context ends a dial to a silent
// listener before the timeout.
func TestDialPeerCancel(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = rdmalat.DialPeer(ctx, silent.Addr().String(), remoteConfig(10*time.Second))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// TestDialPeerRefused: a peer at its session limit, or refusing the
// session's size, says so through DialPeer's error.
func TestDialPeerRefused(t *testing.T) {
	srv := peer.New(peer.Config{
		Session:     peer.ServeConfig{Device: "nodev0", Limits: oob.Limits{MaxSize: 1024}},
		MaxSessions: 1, Logf: t.Logf,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() { // Shutdown does not wait for Serve: wait here, or its goroutine outlives the test
		srv.Shutdown()
		assert.ErrorIs(t, <-served, peer.ErrServerClosed)
	}()
	addr := ln.Addr().String()

	_, err = rdmalat.DialPeer(t.Context(), addr, remoteConfig(2*time.Second))
	require.ErrorIs(t, err, oob.ErrInvalidParams)
	assert.Contains(t, err.Error(), "two-node session with rdmapeer at "+addr+": peer: rdmapeer (nodev0): oob: invalid params: size 4096: over the peer's limit of 1024 bytes")

	// A peer with its one slot taken (rdmapeer takes a slot only with a
	// session, which needs a device: this peer answers busy until told
	// otherwise). Busy is asked again, with backoff, for the timeout in all.
	busyAddr, free := busyPeer(t)
	start := time.Now()
	_, err = rdmalat.DialPeer(t.Context(), busyAddr, remoteConfig(time.Second))
	elapsed := time.Since(start)
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "two-node session with rdmapeer at "+busyAddr+": peer: rdmapeer is busy: all 1 of its session slots are taken")
	assert.Regexp(t, `\(still busy after \d+ tries over [0-9.]+m?s: RDMABENCH_TIMEOUT sets how long to keep trying\)$`, err.Error())
	assert.GreaterOrEqual(t, elapsed, time.Second)
	assert.Less(t, elapsed, 3*time.Second, "stops trying near its 1 s timeout")
	t.Logf("after %v: %v", elapsed.Round(time.Millisecond), err)

	// A slot freed while the client waits: served on a later try (here
	// failing on the missing device, not on busy).
	go func() {
		time.Sleep(300 * time.Millisecond)
		free()
	}()
	start = time.Now()
	_, err = rdmalat.DialPeer(t.Context(), busyAddr, remoteConfig(3*time.Second))
	elapsed = time.Since(start)
	require.Error(t, err)
	assert.NotErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "peer: rdmapeer (nodev0): ")
	assert.Greater(t, elapsed, 300*time.Millisecond)
	assert.Less(t, elapsed, 2*time.Second)
	t.Logf("served after %v: %v", elapsed.Round(time.Millisecond), err)
}

// busyPeer is an rdmapeer stand-in that answers every session with
// rdmapeer's busy Error until free is called, then with a device error.
func busyPeer(t *testing.T) (addr string, free func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var freed atomic.Bool
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			c, err := oob.Accept(nc, 2*time.Second)
			if err != nil {
				continue
			}
			if _, err := c.RecvParams(); err == nil {
				if freed.Load() {
					_ = c.SendError(oob.CodeResource, "rdmapeer (nodev0): no such device")
				} else {
					_ = c.SendError(oob.CodeBusy, "rdmapeer is busy: all 1 of its session slots are taken (rdmapeer -max-sessions); try again later")
				}
			}
			_, _ = c.Recv() // until the client closes
			c.Close()
		}
	})
	return ln.Addr().String(), func() { freed.Store(true) }
}

// waitActive waits up to 5 s for n of srv's session slots to be taken.
func waitActive(t *testing.T, srv *peer.Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); srv.Stats().Active != n; {
		require.True(t, time.Now().Before(deadline), "active %d, want %d", srv.Stats().Active, n)
		time.Sleep(time.Millisecond)
	}
}
