package peer

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// These tests replace the session (Server.serveConn) with one that needs
// no device: it answers the first Params with an Endpoint naming the CPU
// it was given and the other sessions, then holds its slot until the
// client closes. What they check happens before a session touches a device.

type captured struct {
	mu    sync.Mutex
	lines []string
}

func (c *captured) logf(format string, args ...any) {
	c.mu.Lock()
	c.lines = append(c.lines, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func (c *captured) matching(s string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

func (c *captured) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

func holdSession(c *oob.Conn, cfg ServeConfig, first oob.Message) error {
	if _, ok := first.(oob.Params); !ok {
		return c.SendError(oob.CodeProtocol, "want Params")
	}
	others := 0
	if cfg.Others != nil {
		others = cfg.Others()
	}
	if err := c.SendEndpoint(oob.Endpoint{Device: "fake0", CPU: wireCPU(cfg.CPU), Sessions: uint16(others)}); err != nil {
		return err
	}
	_, err := c.Next(0) // until the client closes, or Shutdown
	return err
}

// startFake runs a Server with the fake session on 127.0.0.1.
func startFake(t *testing.T, cfg Config) (*Server, string, *captured) {
	t.Helper()
	logs := &captured{}
	cfg.Logf = logs.logf
	cfg.Session.Device = "nodev0"
	srv := New(cfg)
	srv.serveConn = holdSession
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Shutdown()
		assert.ErrorIs(t, <-done, ErrServerClosed)
		st := srv.Stats()
		assert.Zero(t, st.Active)
		assert.Zero(t, st.Pending)
		srv.mu.Lock()
		assert.Empty(t, srv.perClient, "per-client counts given back")
		assert.Empty(t, srv.pendingPer)
		assert.Empty(t, srv.cpuBusy, "CPUs given back")
		srv.mu.Unlock()
	})
	return srv, ln.Addr().String(), logs
}

// dialFrom does the client's handshake from source address src
// (127.0.0.x: every one of them is this host's).
func dialFrom(t *testing.T, addr, src, token string) (*oob.Conn, error) {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	nc, err := d.DialContext(t.Context(), "tcp", addr)
	require.NoError(t, err)
	c := oob.NewConn(nc)
	c.Timeout, c.Token = 2*time.Second, token
	if _, err := c.Handshake(); err != nil {
		c.Close()
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

var params = oob.Params{Op: spec.Write, Transport: spec.RC, Size: 64, Inline: -1, GIDIndex: -1}

// open sends Params and returns the session's Endpoint, or the refusal.
func open(t *testing.T, c *oob.Conn) (oob.Endpoint, error) {
	t.Helper()
	require.NoError(t, c.SendParams(params))
	return c.RecvEndpoint()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		require.True(t, time.Now().Before(deadline), "waiting for %s", what)
		time.Sleep(time.Millisecond)
	}
}

// TestHelloOnlyHoldsNoSlot: connections that say Hello and then nothing
// hold no session slot (with 4 slots, 4 of them once locked every client
// out for -idle, 10 minutes), and are dropped at the handshake deadline.
func TestHelloOnlyHoldsNoSlot(t *testing.T) {
	srv, addr, logs := startFake(t, Config{MaxSessions: 4, HandshakeTimeout: 2 * time.Second, MaxPerClient: 4})
	var silent []*oob.Conn
	for range 4 {
		c, err := dialFrom(t, addr, "127.0.0.2", "")
		require.NoError(t, err)
		silent = append(silent, c)
	}
	c, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.NoError(t, err, "served while 4 Hello-only connections are open")
	assert.Equal(t, 1, srv.Stats().Active)
	start := time.Now()
	for _, s := range silent {
		_, err := s.Recv()
		assert.Error(t, err, "dropped at the handshake deadline")
	}
	assert.Less(t, time.Since(start), 10*time.Second, "not -idle's 10 minutes")
	// Logged after the close: wait for it; one line for the 4 (rate-limited).
	waitFor(t, "the drops counted and logged", func() bool { return srv.Stats().Refused == 4 && len(logs.matching("rejected: ")) == 1 })
	assert.Contains(t, logs.matching("rejected: ")[0], "no request (Params or Run) from peer 127.0.0.2:")
}

// TestPerClientCap: one address holds at most MaxPerClient sessions;
// another address is still served.
func TestPerClientCap(t *testing.T) {
	srv, addr, logs := startFake(t, Config{MaxSessions: 4, MaxPerClient: 2})
	for range 2 {
		c, err := dialFrom(t, addr, "127.0.0.3", "")
		require.NoError(t, err)
		_, err = open(t, c)
		require.NoError(t, err)
	}
	c, err := dialFrom(t, addr, "127.0.0.3", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "rdmapeer is busy: 127.0.0.3 already has 2 sessions, this peer's limit per client address (rdmapeer -max-per-client)")
	c, err = dialFrom(t, addr, "127.0.0.4", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.NoError(t, err, "another address is served")
	assert.Equal(t, 3, srv.Stats().Active)
	// The line is logged after the refusal is sent: wait for it.
	waitFor(t, "the refusal logged", func() bool { return len(logs.matching("refused 127.0.0.3:")) == 1 })
}

// TestCPUs: each session answers on a CPU of its own; with every CPU
// taken the next client is told so, and a freed CPU serves again. The
// Endpoint tells each client its CPU and how many others run.
func TestCPUs(t *testing.T) {
	srv, addr, _ := startFake(t, Config{MaxSessions: 4, MaxPerClient: 4, CPUs: []int{5, 7}})
	a, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	ea, err := open(t, a)
	require.NoError(t, err)
	b, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	eb, err := open(t, b)
	require.NoError(t, err)
	assert.ElementsMatch(t, []int32{5, 7}, []int32{ea.CPU, eb.CPU}, "distinct CPUs")
	assert.Equal(t, uint16(0), ea.Sessions)
	assert.Equal(t, uint16(1), eb.Sessions, "b was told a ran")

	c, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "every answering CPU (rdmapeer -cpu 5,7) serves another session")

	require.NoError(t, a.Close())
	waitFor(t, "a's session to end", func() bool { return srv.Stats().Active == 1 })
	d, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	ed, err := open(t, d)
	require.NoError(t, err)
	assert.Equal(t, ea.CPU, ed.CPU, "a's CPU, freed")
}

// TestRailCPUs: a connection answers on a CPU of the device its first
// Params name: RailCPUs' for a rail that has its own (on its own NUMA
// node), CPUs for the default device; a rail's CPU taken leaves the
// other rail's free, and the refusal names the rail's CPUs.
func TestRailCPUs(t *testing.T) {
	_, addr, _ := startFake(t, Config{MaxSessions: 4, MaxPerClient: 4, CPUs: []int{7}, RailCPUs: map[string][]int{"rail1": {3}}})
	openOn := func(device string) (oob.Endpoint, error) {
		c, err := dialFrom(t, addr, "127.0.0.1", "")
		require.NoError(t, err)
		p := params
		p.Device = device
		require.NoError(t, c.SendParams(p))
		return c.RecvEndpoint()
	}
	e, err := openOn("rail1")
	require.NoError(t, err)
	assert.Equal(t, int32(3), e.CPU, "rail1's own CPU")
	e, err = openOn("")
	require.NoError(t, err)
	assert.Equal(t, int32(7), e.CPU, "the default device's")
	_, err = openOn("rail1")
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "every answering CPU (rdmapeer -cpu 3) serves another session")
	_, err = openOn("nodev0")
	require.ErrorIs(t, err, oob.ErrBusy, "the default device, named: CPU 7, taken")
}

// TestUnpinnedShare: without CPUs, sessions run side by side and each
// is told how many others ran when it opened.
func TestUnpinnedShare(t *testing.T) {
	_, addr, _ := startFake(t, Config{MaxSessions: 4, MaxPerClient: 4})
	for i := range 3 {
		c, err := dialFrom(t, addr, "127.0.0.1", "")
		require.NoError(t, err)
		e, err := open(t, c)
		require.NoError(t, err)
		assert.Equal(t, int32(-1), e.CPU)
		assert.Equal(t, uint16(i), e.Sessions)
	}
}

// TestAllow: a client outside -allow is closed without a word; one
// inside is served.
func TestAllow(t *testing.T) {
	allow, err := ParseAllow("127.0.0.5/32, 10.0.0.0/8")
	require.NoError(t, err)
	srv, addr, logs := startFake(t, Config{Allow: allow})
	_, err = dialFrom(t, addr, "127.0.0.1", "")
	require.ErrorIs(t, err, oob.ErrNotPeer, "no answer at all")
	c, err := dialFrom(t, addr, "127.0.0.5", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.NoError(t, err)
	// Counted and logged after the connection is closed: wait for them.
	waitFor(t, "the refusal counted and logged", func() bool {
		return srv.Stats().Refused == 1 && len(logs.matching("refused 127.0.0.1:")) == 1
	})
	assert.Contains(t, logs.matching("refused 127.0.0.1:")[0], "not in -allow 127.0.0.5/32,10.0.0.0/8")
}

func TestParseAllow(t *testing.T) {
	got, err := ParseAllow("10.1.2.3, 192.168.77.0/24,::1, 10.9.9.9/8")
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.1.2.3/32"), netip.MustParsePrefix("192.168.77.0/24"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.0.0.0/8")}, got)
	for _, bad := range []string{"", "nodeB", "10.0.0.0/33", ","} {
		_, err := ParseAllow(bad)
		assert.ErrorContains(t, err, "example: -allow", "%q", bad)
	}
}

// TestServerToken: with a token, only a client that knows it is served.
func TestServerToken(t *testing.T) {
	srv, addr, logs := startFake(t, Config{Token: "fleet-secret", LogInterval: time.Hour})
	_, err := dialFrom(t, addr, "127.0.0.1", "")
	require.ErrorIs(t, err, oob.ErrAuth)
	assert.Contains(t, err.Error(), "requires a token: set RDMABENCH_PEER_TOKEN")
	c, err := dialFrom(t, addr, "127.0.0.1", "wrong")
	if err == nil {
		_, err = open(t, c) // the refusal may come after our Auth went out
	}
	require.ErrorIs(t, err, oob.ErrAuth)
	assert.Contains(t, err.Error(), "the client's is wrong")
	c, err = dialFrom(t, addr, "127.0.0.1", "fleet-secret")
	require.NoError(t, err)
	_, err = open(t, c)
	require.NoError(t, err)
	waitFor(t, "the refusals counted and logged", func() bool {
		return srv.Stats().Refused == 2 && len(logs.matching("rejected: oob: not authorized: wrong token from client 127.0.0.1:")) == 1
	})
}

// TestRateLimitedLog: a flood of bad connections writes one line per
// reason per interval, and the count of the rest at shutdown.
func TestRateLimitedLog(t *testing.T) {
	srv, addr, logs := startFake(t, Config{LogInterval: time.Hour, MaxPendingPerClient: 64})
	for range 40 {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, _ = io.WriteString(nc, "GET / HTTP/1.1\r\n\r\n")
		_, _ = io.Copy(io.Discard, nc)
		nc.Close()
	}
	waitFor(t, "40 refusals and the first logged", func() bool { return srv.Stats().Refused == 40 && len(logs.matching("rejected")) == 1 })
	srv.Shutdown()
	assert.Len(t, logs.matching("39 more handshakes rejected since the last logged, not logged"), 1, "%s", logs)
}

// TestRateLog: after the interval the next line carries the count.
func TestRateLog(t *testing.T) {
	var lines []string
	now := time.Unix(1000, 0)
	l := newRateLog(func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }, 10*time.Second)
	l.now = func() time.Time { return now }
	for range 5 {
		l.printf("handshakes rejected", "rejected %d", 1)
		now = now.Add(time.Second)
	}
	l.printf("clients refused as busy", "busy")
	now = now.Add(6 * time.Second)
	l.printf("handshakes rejected", "rejected %d", 2)
	assert.Equal(t, []string{"rejected 1", "busy", "rejected 2 (and 4 more handshakes rejected in the last 11s, not logged)"}, lines)
}

// TestPendingPerClient: one address's silent connections take at most
// MaxPendingPerClient of the handshake slots: another address still gets
// through while they are open.
func TestPendingPerClient(t *testing.T) {
	srv, addr, _ := startFake(t, Config{MaxHandshakes: 8, MaxPendingPerClient: 4, HandshakeTimeout: time.Minute})
	for range 10 {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.6")}}
		nc, err := d.DialContext(context.Background(), "tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
	}
	waitFor(t, "4 pending and 6 refused", func() bool { st := srv.Stats(); return st.Pending == 4 && st.Refused == 6 })
	c, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.NoError(t, err)
}

// TestBusy: with MaxSessions sessions open, the next client is told the
// peer is busy (ErrBusy), and is served once one of them leaves.
func TestBusy(t *testing.T) {
	srv, addr, logs := startFake(t, Config{MaxSessions: 2})
	a, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	_, err = open(t, a)
	require.NoError(t, err)
	b, err := dialFrom(t, addr, "127.0.0.2", "")
	require.NoError(t, err)
	_, err = open(t, b)
	require.NoError(t, err)
	c, err := dialFrom(t, addr, "127.0.0.3", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Equal(t, "peer: rdmapeer is busy: all 2 of its session slots are taken (rdmapeer -max-sessions); try again later", err.Error())
	waitFor(t, "the refusal logged", func() bool { return len(logs.matching("refused "+c.NetConn().LocalAddr().String())) == 1 })

	require.NoError(t, a.Close())
	waitFor(t, "a's slot free", func() bool { return srv.Stats().Active == 1 })
	d, err := dialFrom(t, addr, "127.0.0.3", "")
	require.NoError(t, err)
	_, err = open(t, d)
	require.NoError(t, err, "served")
	assert.Equal(t, 1, srv.Stats().Refused)
}

// TestShutdown: Shutdown tells connected clients and closes them.
func TestShutdown(t *testing.T) {
	srv := New(Config{Session: ServeConfig{Device: "nodev0"}, Logf: func(string, ...any) {}})
	srv.serveConn = holdSession
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	c, err := dialFrom(t, ln.Addr().String(), "127.0.0.1", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.NoError(t, err)
	srv.Shutdown()
	require.ErrorIs(t, <-done, ErrServerClosed)
	_, err = c.Recv()
	var perr *oob.Error
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, "peer: rdmapeer is shutting down", perr.Error())
	_, err = net.Dial("tcp", ln.Addr().String())
	assert.Error(t, err, "the listener is closed")
}

// wireCPU is oob's CPU field for c: -1 when not pinned.
func wireCPU(c env.CPU) int32 {
	if id, pinned := c.ID(); pinned {
		return int32(id)
	}
	return -1
}
