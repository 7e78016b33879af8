package rdmacm

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/verbs"
)

// Under emulation everything is slow: deadlines are seconds.
const (
	connectTimeout = 20 * time.Second
	pollTimeout    = 10 * time.Second
	bufSize        = 4096
)

// side is one end of a test connection: its own PD, CQ, QP and buffer.
type side struct {
	ctx  *verbs.Context
	addr netip.Addr
	pd   *verbs.PD
	cq   *verbs.CQ
	qp   *verbs.QP
	mr   *verbs.MR
}

// checkLeaks makes t fail if verbs objects or cm ids opened during t are
// still open after its cleanups. Call it first, so that it runs last.
func checkLeaks(t *testing.T) {
	t.Helper()
	verbsBefore, cmBefore := verbs.OpenObjects(), OpenObjects()
	t.Cleanup(func() {
		require.Equal(t, verbsBefore, verbs.OpenObjects(), "verbs objects leaked")
		require.Equal(t, cmBefore, OpenObjects(), "rdma_cm ids or channels leaked")
	})
}

// devices returns the test device and the second device (rxe0, rxe1 in the
// VM), skipping or failing as testenv decides.
func devices(t testing.TB) (string, string) {
	t.Helper()
	if testDevices == nil {
		t.Fatal("rdmacm tests: no device finder: devices_test.go sets it from testenv")
	}
	return testDevices(t)
}

// testDevices is set by devices_test.go, in package rdmacm_test: testenv
// imports rdmalat, which imports this package, so tests of package rdmacm
// itself cannot import testenv.
var testDevices func(testing.TB) (string, string)

// SetTestDevices is how devices_test.go sets testDevices.
func SetTestDevices(f func(testing.TB) (string, string)) { testDevices = f }

func open(t testing.TB, name string) *verbs.Context {
	t.Helper()
	ctx, err := verbs.Open(name)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ctx.Close()) })
	return ctx
}

func newSide(t testing.TB, ctx *verbs.Context, typ verbs.QPType) *side {
	t.Helper()
	s := &side{ctx: ctx}
	var err error
	s.addr, err = DeviceAddr(ctx, 1)
	require.NoError(t, err)
	s.pd, err = ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.pd.Close()) })
	s.cq, err = ctx.CreateCQ(64, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.cq.Close()) })
	s.mr, err = s.pd.AllocMR(bufSize, verbs.AccessAll)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.mr.Close()) })
	s.qp, err = s.pd.CreateQP(verbs.QPConfig{Type: typ, SendCQ: s.cq, MaxSendWR: 16, MaxRecvWR: 16})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.qp.Close()) })
	return s
}

func (s *side) config() Config {
	return Config{QP: s.qp, Local: PeerInfo{Addr: s.mr.Addr(), Size: uint64(s.mr.Len()), RKey: s.mr.RKey()}}
}

func listen(t *testing.T, addr netip.Addr, typ verbs.QPType) *Listener {
	t.Helper()
	l, err := Listen(netip.AddrPortFrom(addr, 0), typ)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// loopback connects server and client through a listener on the server's
// address, the client dialling from its own.
func loopback(t *testing.T, server, client *side, typ verbs.QPType) (srv, cli *Conn) {
	t.Helper()
	return loopbackConfig(t, server, client, typ, func(*Config) {})
}

// loopbackConfig is loopback with both Configs changed by set.
func loopbackConfig(t *testing.T, server, client *side, typ verbs.QPType, set func(*Config)) (srv, cli *Conn) {
	t.Helper()
	l := listen(t, server.addr, typ)
	scfg, ccfg := server.config(), client.config()
	set(&scfg)
	set(&ccfg)
	srv, cli, err := Loopback(timeout(t, connectTimeout), l, client.addr, scfg, ccfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	t.Cleanup(func() { require.NoError(t, cli.Close()) })
	// Connections outlive their listener: the tests use them after this.
	require.NoError(t, l.Close())
	t.Logf("%s %v -> %s %v: connected in %v (client), %v (server from the request)",
		client.ctx.Name(), cli.LocalAddr(), server.ctx.Name(), l.Addr(), cli.SetupTime().Round(time.Microsecond), srv.SetupTime().Round(time.Microsecond))
	return srv, cli
}

// pollOne waits for one completion on cq and requires it to be successful.
func pollOne(t testing.TB, cq *verbs.CQ) verbs.WorkCompletion {
	t.Helper()
	var wc [1]verbs.WorkCompletion
	deadline := time.Now().Add(pollTimeout)
	for {
		n, err := cq.Poll(wc[:])
		require.NoError(t, err)
		if n == 1 {
			require.NoError(t, wc[0].Err())
			return wc[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completion within %v", pollTimeout)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// pattern fills b with bytes derived from seed.
func pattern(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}
