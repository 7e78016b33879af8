package peer

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// TestForgedLogLine: a first frame that is an Error whose text holds a
// newline and a made-up session line, sent before any authentication,
// is logged as one line with the newline escaped: no line of the log is
// the client's.
func TestForgedLogLine(t *testing.T) {
	srv, addr, logs := startFake(t, Config{Token: "fleet-secret", LogInterval: time.Hour})
	const forged = "x\nrdmapeer: 2026/12/05 00:00:00.000000 session 10.0.0.7:40000 device=mlx5_0 op=write result=ok\r\u202e"
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	c := oob.NewConn(nc)
	c.Timeout = 2 * time.Second
	require.NoError(t, c.Send(oob.Error{Code: oob.CodeInternal, Msg: forged}))
	waitFor(t, "the refusal logged", func() bool { return srv.Stats().Refused == 1 && len(logs.matching("rejected")) == 1 })
	for _, l := range strings.Split(logs.String(), "\n") {
		assert.False(t, strings.HasPrefix(l, "rdmapeer: 2026/12/05"), "a log line the client wrote: %q", l)
	}
	line := logs.matching("rejected")[0]
	assert.NotContains(t, line, "\n")
	assert.NotContains(t, line, "\r")
	assert.Contains(t, line, `x\nrdmapeer: 2026/12/05 00:00:00.000000 session 10.0.0.7:40000`)
	assert.Contains(t, line, `result=ok\r\u202e`)
}

func TestEscapeLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, é and 日本": "plain text, é and 日本",
		"a\nb\r\tc":            `a\nb\r\tc`,
		"\x00\x1b[31m\x7f":     `\x00\x1b[31m\x7f`,
		"\u0085\u2028\u2029":   `\u0085\u2028\u2029`,
		"ab\u202ecd\u200b":     `ab\u202ecd\u200b`,
		"bad \xff utf-8":       `bad \xff utf-8`,
	} {
		assert.Equal(t, want, escapeLine(in), "%q", in)
	}
}

// TestHandshakeOneDeadline: -handshake-timeout bounds the whole handshake,
// from the accept to the first Params: a client that sends its Hello and
// then its Auth and Params each within the bound, but not all of them
// within it, is dropped and never takes a session.
func TestHandshakeOneDeadline(t *testing.T) {
	const bound = 2 * time.Second // margins of 0.8 s either way, for a loaded host
	srv, addr, logs := startFake(t, Config{HandshakeTimeout: bound, LogInterval: time.Hour})
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	c := oob.NewConn(nc)
	c.Timeout = 5 * time.Second
	time.Sleep(bound * 6 / 10)
	require.NoError(t, c.SendHello(oob.Hello{Version: oob.Version, Software: "slow"}))
	_, err = c.RecvHello()
	require.NoError(t, err)
	_, err = c.Recv() // the Challenge
	require.NoError(t, err)
	time.Sleep(bound * 6 / 10)
	_ = c.Send(oob.Auth{Addr: oob.SessionAddr(nc.RemoteAddr())}) // may fail: dropped already
	_ = c.SendParams(params)
	_, err = c.RecvEndpoint()
	require.Error(t, err, "admitted 1.2 handshake bounds after its accept")
	waitFor(t, "the drop counted", func() bool { return srv.Stats().Refused == 1 })
	assert.Zero(t, srv.Stats().Sessions+srv.Stats().Active, "no session")
	assert.Len(t, logs.matching("rejected"), 1)
}

// TestPendingPerIPv6Prefix: for IPv6, MaxPendingPerClient and
// MaxPerClient count by /64, since one host can draw any number of
// addresses from its /64; IPv4 counts by address.
func TestPendingPerIPv6Prefix(t *testing.T) {
	s := New(Config{MaxPendingPerClient: 3, Logf: t.Logf})
	in := func(i int) netip.Addr {
		return netip.AddrFrom16([16]byte{0: 0x20, 1: 0x01, 2: 0x0d, 3: 0xb8, 15: byte(i), 14: byte(i)})
	}
	for i := range 3 {
		require.True(t, s.pend(in(i)))
	}
	assert.False(t, s.pend(in(9)), "a fourth address of the same /64")
	assert.False(t, s.pend(netip.MustParseAddr("2001:db8::77%eth0")), "a zone does not make another client")
	other := netip.MustParseAddr("2001:db8:0:1::1")
	assert.True(t, s.pend(other), "another /64")
	for i := range 4 {
		assert.True(t, s.pend(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})), "IPv4: by address")
	}
	v4 := netip.MustParseAddr("10.0.0.1")
	assert.True(t, s.pend(v4))
	assert.True(t, s.pend(netip.MustParseAddr("::ffff:10.0.0.1")))
	assert.False(t, s.pend(v4), "an IPv4-mapped address is its IPv4 one")
	for i := range 3 {
		s.unpend(in(i))
	}
	assert.True(t, s.pend(in(5)), "places given back")

	// Sessions too: MaxPerClient counts by /64.
	s = New(Config{MaxPerClient: 1, Logf: t.Logf})
	s.mu.Lock()
	defer s.mu.Unlock()
	a, _, refusal := s.admitLocked(in(1), "", true)
	require.Empty(t, refusal)
	_, _, refusal = s.admitLocked(in(2), "", true)
	assert.Equal(t, "rdmapeer is busy: 2001:db8::/64 already has 1 sessions, this peer's limit per client address (rdmapeer -max-per-client); try again later", refusal)
	_, _, refusal = s.admitLocked(other, "", true)
	assert.Empty(t, refusal, "another /64")
	s.releaseLocked(a)
	_, _, refusal = s.admitLocked(in(2), "", true)
	assert.Empty(t, refusal, "given back")
}

// TestAllowEdges: -allow's empty lists are all errors (never "any
// address"); a zone is refused with what to type; IPv4-mapped prefixes
// are the IPv4 ones they name; a client address with a zone is matched
// without it.
func TestAllowEdges(t *testing.T) {
	for _, empty := range []string{"", " ", ",", " , "} {
		_, err := ParseAllow(empty)
		assert.ErrorContains(t, err, "no prefix; leave -allow out to serve any address", "%q", empty)
	}
	_, err := ParseAllow("fe80::1%eth0")
	assert.ErrorContains(t, err, `names an IPv6 zone (%eth0), which client addresses are compared without; write fe80::1`)
	_, err = ParseAllow("fe80::%eth0/10")
	assert.ErrorContains(t, err, "write fe80::/10")
	_, err = ParseAllow("::ffff:0:0/80")
	assert.ErrorContains(t, err, "write IPv4 and IPv6 prefixes apart")
	got, err := ParseAllow("::ffff:10.0.0.0/104,::ffff:192.168.77.2,::ffff:0:0/96")
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.77.2/32"), netip.MustParsePrefix("0.0.0.0/0")}, got)

	s := New(Config{Allow: []netip.Prefix{netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("10.0.0.0/8")}, Logf: t.Logf})
	for addr, want := range map[string]bool{
		"[fe80::1%eth0]:40000":    true,
		"[fe80::1]:40000":         true,
		"[::ffff:10.1.2.3]:40000": true,
		"10.1.2.3:40000":          true,
		"[2001:db8::1]:40000":     false,
		"192.168.1.1:40000":       false,
	} {
		ap := netip.MustParseAddrPort(addr)
		nc := fakeConn{remote: &net.TCPAddr{IP: ap.Addr().AsSlice(), Port: int(ap.Port()), Zone: ap.Addr().Zone()}}
		assert.Equal(t, want, s.allowed(remoteIP(nc)), addr)
	}
}

type fakeConn struct {
	net.Conn
	remote net.Addr
}

func (f fakeConn) RemoteAddr() net.Addr { return f.remote }

// TestLoopTimeoutBounded: a client that asks for the default loop timeout
// (IdleTimeout 0) gets this peer's default, never more than the longest
// a client may ask for.
func TestLoopTimeoutBounded(t *testing.T) {
	cfg := ServeConfig{Timeout: 10 * time.Minute, Limits: oob.Limits{MaxIdleTimeout: 30 * time.Second}}
	assert.Equal(t, 30*time.Second, loopTimeout(oob.Params{}, cfg))
	assert.Equal(t, 2*time.Second, loopTimeout(oob.Params{IdleTimeout: 2 * time.Second}, cfg))
	cfg.Timeout = 5 * time.Second
	assert.Equal(t, 5*time.Second, loopTimeout(oob.Params{}, cfg))
	cfg.Limits = oob.Limits{} // the default limit, 30 s
	cfg.Timeout = time.Hour
	assert.Equal(t, oob.DefaultLimits.MaxIdleTimeout, loopTimeout(oob.Params{}, cfg))
}
