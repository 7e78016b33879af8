package peer_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// These tests need no RDMA device: everything they check happens before a
// session opens one (the VM tests in cmd/rdmapeer run whole sessions).

// logLines collects a Server's log.
type logLines struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
}

// wait returns the first line containing s, waiting up to 5 s for it.
func (l *logLines) wait(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if strings.Contains(line, s) {
				l.mu.Unlock()
				return line
			}
		}
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("no log line with %q within 5 s; log:\n%s", s, strings.Join(l.lines, "\n"))
		}
	}
}

// start runs a Server on 127.0.0.1 for the test; Shutdown at its end.
func start(t *testing.T, cfg peer.Config) (*peer.Server, string, *logLines) {
	t.Helper()
	logs := &logLines{added: make(chan struct{}, 1)}
	cfg.Logf = logs.logf
	if cfg.Session.Device == "" {
		cfg.Session.Device = "nodev0" // never opened: these sessions end before
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	srv := peer.New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Shutdown()
		assert.ErrorIs(t, <-done, peer.ErrServerClosed)
		assert.Zero(t, srv.Stats().Active)
		assert.Zero(t, srv.Stats().Memory)
	})
	return srv, ln.Addr().String(), logs
}

func dial(t *testing.T, addr string) *oob.Conn {
	t.Helper()
	c, err := oob.Dial(t.Context(), addr, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

var goodParams = oob.Params{Op: spec.Write, Transport: spec.RC, Size: 4096, Inline: -1, GIDIndex: -1}

// ask sends p and returns the peer's answer as an *oob.Error.
func ask(t *testing.T, c *oob.Conn, p oob.Params) *oob.Error {
	t.Helper()
	require.NoError(t, c.SendParams(p))
	_, err := c.RecvEndpoint()
	var perr *oob.Error
	require.ErrorAs(t, err, &perr)
	return perr
}

func TestPeerRefusesParams(t *testing.T) {
	_, addr, logs := start(t, peer.Config{
		Session:   peer.ServeConfig{Limits: oob.Limits{MaxSize: 64 << 10, MaxIdleTimeout: time.Minute}},
		MaxMemory: 1 << 20,
	})
	with := func(f func(p *oob.Params)) oob.Params { p := goodParams; f(&p); return p }
	for _, tc := range []struct {
		name string
		p    oob.Params
		code oob.Code
		is   error
		want string
	}{
		{"size over the limit", with(func(p *oob.Params) { p.Size = 64<<10 + 1 }), oob.CodeParams, oob.ErrInvalidParams,
			"peer: rdmapeer (nodev0): oob: invalid params: size 65537: over the peer's limit of 65536 bytes"},
		{"zero size", with(func(p *oob.Params) { p.Size = 0 }), oob.CodeParams, oob.ErrInvalidParams, "size 0: must be 1..65536 bytes"},
		{"idle timeout", with(func(p *oob.Params) { p.IdleTimeout = time.Hour }), oob.CodeParams, oob.ErrInvalidParams,
			"idle timeout 1h0m0s: must be 0 (peer's default) up to 1m0s"},
		{"read over uc", with(func(p *oob.Params) { p.Op, p.Transport = spec.Read, spec.UC }), oob.CodeParams, oob.ErrInvalidParams,
			"read over uc: UC has no RDMA READ or atomics; use rc"},
		{"events with write", with(func(p *oob.Params) { p.Flags = oob.FlagEvents }), oob.CodeParams, oob.ErrInvalidParams,
			"events with write: perftest has no events mode"},
		{"rdma_cm over uc", with(func(p *oob.Params) { p.Transport, p.Flags = spec.UC, oob.FlagCM }), oob.CodeParams, oob.ErrInvalidParams,
			"rdma_cm over uc: librdmacm connects RC and UD queue pairs only"},
		{"rdma_cm reaches the device", with(func(p *oob.Params) { p.Op, p.Flags = spec.Send, oob.FlagCM }), oob.CodeResource, nil, "rdmapeer (nodev0): "},
		{"every op reaches the device", with(func(p *oob.Params) { p.Op, p.Transport, p.Size = spec.FetchAdd, spec.RC, 8 }), oob.CodeResource, nil, "rdmapeer (nodev0): "},
		{"device", goodParams, oob.CodeResource, nil, "rdmapeer (nodev0): "},
		{"load stream of reads", with(func(p *oob.Params) { p.Op, p.Flags = spec.Read, oob.FlagLoad }), oob.CodeParams, oob.ErrInvalidParams,
			"load stream with read over rc (flags 0x20): a load stream is RDMA WRITEs over rc"},
		{"load stream over the size limit", with(func(p *oob.Params) { p.Size, p.Flags = 64<<10+1, oob.FlagLoad }), oob.CodeParams, oob.ErrInvalidParams,
			"size 65537: over the peer's limit of 65536 bytes"},
		{"load stream reaches the device", with(func(p *oob.Params) { p.Flags = oob.FlagLoad }), oob.CodeResource, nil, "rdmapeer (nodev0): "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			perr := ask(t, c, tc.p)
			assert.Equal(t, tc.code, perr.Code, "%v", perr)
			if tc.is != nil {
				assert.ErrorIs(t, perr, tc.is)
			}
			assert.Contains(t, perr.Error(), tc.want)
			// The peer ends the connection after an Error.
			_, err := c.Recv()
			assert.Error(t, err)
			logs.wait(t, "session "+c.NetConn().LocalAddr().String()+" ")
		})
	}
}

// TestPeerMemoryBudget: sessions together may register at most MaxMemory;
// one session alone over it is refused as invalid, one that fits only
// once others end as busy.
func TestPeerMemoryBudget(t *testing.T) {
	srv, addr, _ := start(t, peer.Config{MaxMemory: 8 << 10})
	c := dial(t, addr)
	perr := ask(t, c, oob.Params{Op: spec.Write, Transport: spec.RC, Size: 8<<10 + 1, Inline: -1, GIDIndex: -1})
	assert.Equal(t, oob.CodeParams, perr.Code)
	assert.Contains(t, perr.Msg, "the session would register 16386 bytes (twice its size), over this peer's limit of 8192 (rdmapeer -max-memory)")
	assert.Zero(t, srv.Stats().Memory)
}

// TestPeerNotClient: something that does not speak the protocol is
// answered with an Error, rejected and logged, and holds no slot.
func TestPeerNotClient(t *testing.T) {
	srv, addr, logs := start(t, peer.Config{MaxSessions: 1})
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = io.WriteString(nc, "GET / HTTP/1.1\r\nHost: nodeB\r\n\r\n")
	require.NoError(t, err)
	reply, err := io.ReadAll(nc)
	require.NoError(t, err)
	m, err := oob.Decode(reply)
	require.NoError(t, err)
	assert.Equal(t, oob.TypeError, m.Type())
	logs.wait(t, "rejected: "+nc.LocalAddr().String()+` is not an rdmabench client (got "GET / HTTP/1.1`)
	assert.Equal(t, 1, srv.Stats().Refused)

	c := dial(t, addr) // the slot is free again
	assert.Equal(t, oob.CodeResource, ask(t, c, goodParams).Code)
}

// TestPeerProtocolErrors: a Run before any Params, and a message a client
// never sends, end the connection with an Error saying so.
func TestPeerProtocolErrors(t *testing.T) {
	_, addr, logs := start(t, peer.Config{})
	for _, tc := range []struct {
		name string
		msg  oob.Message
		want string
	}{
		{"Run first", oob.Run{Seq: 1, Size: 2}, "Run before Params"},
		{"Barrier", oob.Barrier{Seq: 1}, "expected Params or Run from"},
		{"Done outside a load session", oob.Done{RoundTrips: 1}, "expected Params or Run from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			require.NoError(t, c.Send(tc.msg))
			_, err := c.Recv()
			require.ErrorIs(t, err, oob.ErrProtocol)
			assert.Contains(t, err.Error(), tc.want)
			line := logs.wait(t, "session "+c.NetConn().LocalAddr().String()+" ")
			assert.Contains(t, line, "result=error: ")
			assert.Contains(t, line, tc.want)
		})
	}
}

func TestFormatReport(t *testing.T) {
	for _, tc := range []struct {
		r    peer.SessionReport
		want string
	}{
		{peer.SessionReport{Client: "10.0.0.1:4711", Params: goodParams, Device: "rxe1", Sizes: []int{2, 4096}, Runs: 20, RoundTrips: 123456, Duration: 2345678 * time.Microsecond},
			"session 10.0.0.1:4711 device=rxe1 op=write max-size=4096 sizes=2,4096 runs=20 round-trips=123456 duration=2.346s result=ok"},
		{peer.SessionReport{Client: "10.0.0.1:4712", Params: goodParams, Device: "rxe1", Duration: time.Millisecond, Err: errors.New("boom")},
			"session 10.0.0.1:4712 device=rxe1 op=write max-size=4096 sizes=none runs=0 round-trips=0 duration=1ms result=error: boom"},
		{peer.SessionReport{Client: "10.0.0.1:4714", Params: oob.Params{Op: spec.Write, Transport: spec.RC, Size: 4096, Flags: oob.FlagLoad}, Device: "rxe1", Sizes: []int{4096}, Runs: 3, Bytes: 1 << 20, Duration: 2 * time.Second},
			"session 10.0.0.1:4714 device=rxe1 load-stream op=write max-size=4096 runs=3 bytes=1048576 duration=2s result=ok"},
		{peer.SessionReport{Client: "10.0.0.1:4713", Duration: 3 * time.Second},
			"session 10.0.0.1:4713 no session duration=3s result=ok"},
	} {
		assert.Equal(t, tc.want, peer.FormatReport(tc.r))
	}
}

// waitActive waits up to 5 s for n session slots to be taken.
func waitActive(t *testing.T, srv *peer.Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); srv.Stats().Active != n; {
		require.True(t, time.Now().Before(deadline), "active %d, want %d", srv.Stats().Active, n)
		time.Sleep(time.Millisecond)
	}
}

// holdIdle opens n TCP connections to addr that never send a Hello, and
// waits until the server has all of them in their handshake.
func holdIdle(t *testing.T, srv *peer.Server, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
		conns[i] = nc
	}
	for deadline := time.Now().Add(5 * time.Second); srv.Stats().Pending != n; {
		require.True(t, time.Now().Before(deadline), "pending %d, want %d", srv.Stats().Pending, n)
		time.Sleep(time.Millisecond)
	}
	return conns
}

// TestPeerIdleConnsHoldNoSlot: 20 connections that never send a Hello
// take no session slot: with 4 slots, a client is still served, and so
// are 4 more that said Hello, one after the other. They all come from
// 127.0.0.1 and the limit per client is 1: a session's slot and its
// client's count go back before its last answer, so the next ask, sent as
// soon as that answer is read, is never refused as busy (it was, under
// load, when they went back after it).
func TestPeerIdleConnsHoldNoSlot(t *testing.T) {
	srv, addr, _ := start(t, peer.Config{MaxSessions: 4, MaxPerClient: 1, HandshakeTimeout: time.Minute, MaxPendingPerClient: 64})
	holdIdle(t, srv, addr, 20)
	assert.Zero(t, srv.Stats().Active)
	var cs []*oob.Conn
	for range 4 {
		cs = append(cs, dial(t, addr))
	}
	for _, c := range cs {
		perr := ask(t, c, goodParams)
		assert.Equal(t, oob.CodeResource, perr.Code, "served (and failed on the missing device), not busy: %v", perr)
	}
	assert.Equal(t, 20, srv.Stats().Pending)
}

// TestPeerHandshakeDeadline: a connection that sends nothing is dropped
// after HandshakeTimeout, and logged.
func TestPeerHandshakeDeadline(t *testing.T) {
	srv, addr, logs := start(t, peer.Config{HandshakeTimeout: 200 * time.Millisecond})
	nc := holdIdle(t, srv, addr, 1)[0]
	start := time.Now()
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := io.ReadAll(nc) // the server's Error, then EOF
	require.NoError(t, err, "closed by the server, not by our deadline")
	elapsed := time.Since(start)
	assert.Less(t, elapsed, 2*time.Second)
	logs.wait(t, "rejected: "+nc.LocalAddr().String()+" is not an rdmabench client (got no answer within 200ms)")
	assert.Equal(t, 1, srv.Stats().Refused)
	assert.Zero(t, srv.Stats().Pending)
	t.Logf("dropped after %v", elapsed.Round(time.Millisecond))
}

// TestPeerHandshakeLimit: over MaxHandshakes connections in their
// handshake, a client is told the peer is busy, and a silent connection
// is closed at once.
func TestPeerHandshakeLimit(t *testing.T) {
	srv, addr, logs := start(t, peer.Config{MaxHandshakes: 3, HandshakeTimeout: time.Minute})
	holdIdle(t, srv, addr, 3)
	_, err := oob.Dial(t.Context(), addr, 2*time.Second)
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "refused the handshake: peer: rdmapeer is busy: 3 connections are opening at once; try again later")
	logs.wait(t, "busy (3 connections in their handshake)")

	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	start := time.Now()
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := nc.Read(make([]byte, 1))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF, "closed, not left waiting")
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, 2, srv.Stats().Refused)
}

// TestPeerHelloOnly: a connection that says Hello and then sends no
// Params is dropped at the handshake deadline (not after -idle), logged
// as rejected, and never took a slot.
func TestPeerHelloOnly(t *testing.T) {
	// The deadline leaves the handshake itself room on a loaded host;
	// what matters is that it, not the hour of Idle, ends the connection.
	srv, addr, logs := start(t, peer.Config{HandshakeTimeout: 2 * time.Second, Session: peer.ServeConfig{Idle: time.Hour}})
	c := dial(t, addr)
	start := time.Now()
	_, err := c.Recv()
	assert.Error(t, err, "dropped")
	assert.Less(t, time.Since(start), 10*time.Second)
	line := logs.wait(t, "rejected: ")
	assert.Contains(t, line, "no request (Params or Run) from peer "+c.NetConn().LocalAddr().String())
	assert.Zero(t, srv.Stats().Active)
	assert.Equal(t, 1, srv.Stats().Refused)
}

// TestPeerGIDIndexIsTheOperators: a client may not point the peer at
// another GID than rdmapeer -gid-index; -1 (the peer's choice) and the
// operator's own index are accepted (and reach the missing device).
func TestPeerGIDIndexIsTheOperators(t *testing.T) {
	for _, tc := range []struct {
		own, asked int32
		want       string
	}{
		{-1, 3, "gid index 3: this rdmapeer uses the best GID of its port (rdmapeer -gid-index -1); a client may not choose it (send -1)"},
		{1, 0, "gid index 0: this rdmapeer uses its GID index 1 (rdmapeer -gid-index); a client may not choose it (send -1)"},
		{1, 1, ""},
		{1, -1, ""},
	} {
		t.Run(fmt.Sprintf("own%d-asked%d", tc.own, tc.asked), func(t *testing.T) {
			_, addr, _ := start(t, peer.Config{Session: peer.ServeConfig{GIDIndex: int(tc.own)}})
			p := goodParams
			p.GIDIndex = tc.asked
			perr := ask(t, dial(t, addr), p)
			if tc.want == "" {
				assert.Equal(t, oob.CodeResource, perr.Code, "accepted, failed on the device: %v", perr)
				return
			}
			assert.Equal(t, oob.CodeParams, perr.Code, "%v", perr)
			assert.Contains(t, perr.Msg, tc.want)
		})
	}
}

// TestPeerRailsNamedDevice: a session opens on the device its Params
// name, one of those served (the default for none); any other is refused
// with the list served. The devices do not exist here, so an accepted
// session fails on the one it named, and says which.
func TestPeerRailsNamedDevice(t *testing.T) {
	_, addr, logs := start(t, peer.Config{Session: peer.ServeConfig{Device: "nodev0", Rails: []peer.Rail{{Device: "nodev1"}}}})
	for _, tc := range []struct{ asked, opened string }{{"", "nodev0"}, {"nodev0", "nodev0"}, {"nodev1", "nodev1"}} {
		p := goodParams
		p.Device = tc.asked
		perr := ask(t, dial(t, addr), p)
		assert.Equal(t, oob.CodeResource, perr.Code, "accepted, failed on the device: %v", perr)
		assert.Contains(t, perr.Msg, "rdmapeer ("+tc.opened+"): ", "asked for %q", tc.asked)
		logs.wait(t, "device="+tc.opened+" op=write")
	}
	p := goodParams
	p.Device = "nodev9"
	perr := ask(t, dial(t, addr), p)
	assert.Equal(t, oob.CodeParams, perr.Code, "%v", perr)
	assert.ErrorIs(t, perr, oob.ErrInvalidParams)
	assert.Equal(t, `rdmapeer (nodev0): oob: invalid params: device "nodev9": this rdmapeer serves nodev0,nodev1 (rdmapeer -device); name one of them in RDMABENCH_PEER_DEVICE, one per rail`, perr.Msg)
}
