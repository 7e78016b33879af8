//go:build linux

package rdmalat_test

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/internal/rdmacm"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// Queue pairs connected through rdma_cm (perftest -R) instead of by
// exchanging PeerInfo: the same loops run on them, in loopback (one device
// and rxe1 -> rxe0) and two-node mode (against package peer's session).

// cmVariants are the variants tried over rdma_cm: RC with the buffer's
// rkey and address from the CM's private data (write, read, an atomic),
// and UD with the address handle and QPN from the CM's SIDR reply.
var cmVariants = []variant{
	{spec.Write, spec.RC, false}, {spec.Read, spec.RC, false}, {spec.FetchAdd, spec.RC, false},
	{spec.Send, spec.UD, false}, {spec.SendImm, spec.RC, true},
}

// TestCMRefusesUC: UC over rdma_cm fails before any device is opened or
// any peer reached, saying what to use instead.
func TestCMRefusesUC(t *testing.T) {
	cfg := rdmalat.EndpointConfig{Device: "nodev0", GIDIndex: -1, Op: spec.Write, Transport: spec.UC, CM: true, MaxSize: 64}
	_, err := rdmalat.NewEndpoint(cfg)
	require.EqualError(t, err, "rdmalat: rdma_cm over uc: librdmacm connects RC and UD queue pairs only (perftest -R refuses UC too); use rc or ud, or connect without rdma_cm (unset RDMABENCH_CM)")
	_, err = rdmalat.NewLoopback(rdmalat.LoopbackConfig{Endpoint: cfg})
	require.ErrorContains(t, err, "rdma_cm over uc")
	start := time.Now()
	_, err = rdmalat.DialPeer(t.Context(), "127.0.0.1:1", rdmalat.RemoteConfig{Endpoint: cfg})
	require.ErrorContains(t, err, "rdma_cm over uc")
	assert.Less(t, time.Since(start), time.Second, "refused before dialling")
}

func newCMPair(t *testing.T, v variant, peerDevice string, maxSize int) *rdmalat.Pair {
	t.Helper()
	c := testenv.MustHaveRDMA(t)
	start := time.Now()
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{
			Device: c.Device, GIDIndex: c.GIDIndex, Op: v.op, Transport: v.tr, Events: v.events, CM: true,
			MaxSize: maxSize, Inline: c.Inline, MTU: c.MTU,
		},
		PeerDevice: peerDevice, Timeout: 10 * time.Second,
	})
	require.NoError(t, err, "%v", v)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	require.True(t, p.Local.CM())
	require.Positive(t, p.Local.CMSetupTime(), "connected by rdma_cm")
	t.Logf("%v: pair built in %v, rdma_cm connect %v", v, time.Since(start).Round(time.Millisecond), p.Local.CMSetupTime().Round(time.Millisecond))
	return p
}

func assertNoCMObjects(t *testing.T) {
	t.Helper()
	assert.Equal(t, map[string]int{"cm_id": 0, "event_channel": 0}, rdmacm.OpenObjects())
}

func TestCMLoopback(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	for _, peerDevice := range []string{"", second} {
		for _, v := range cmVariants {
			t.Run(v.String()+"/peer="+peerDevice, func(t *testing.T) {
				p := newCMPair(t, v, peerDevice, 1024)
				if peerDevice != "" {
					require.NotEqual(t, p.Local.Device().Name, p.PeerDevice.Name)
				}
				for _, size := range sizesFor(v, p.Local.Device().MTU) {
					size = min(size, 1024)
					rec, _ := runSamples(t, p, size, 10, 200)
					assert.Equal(t, int64(201), rec.Summary().Count)
				}
			})
		}
	}
	assertNoCMObjects(t)
}

// READ through rdma_cm returns the peer's bytes: the rkey and address came
// through the CM's private data.
func TestCMReadReturnsPeerBytes(t *testing.T) {
	p := newCMPair(t, variant{spec.Read, spec.RC, false}, "", 4096)
	peerBuf := rdmalat.PeerReceiveHalf(p)
	for i := range peerBuf {
		peerBuf[i] = byte(i*5 + 1)
	}
	runSamples(t, p, 4096, 0, 20)
	assert.Equal(t, peerBuf, rdmalat.LocalSendHalf(p))
}

// Two-node over rdma_cm: the client asks for it (oob.FlagCM), the peer
// listens on its device's address and names it in its Endpoint, the
// client dials it; every Run then goes as over a TCP-exchanged connection.
func TestCMTwoNode(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	peerDev := testenv.MustHaveSecondDevice(t, c)
	srv := peer.New(peer.Config{
		Session: peer.ServeConfig{Device: peerDev, GIDIndex: -1},
		Logf:    t.Logf,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Shutdown()
		assert.ErrorIs(t, <-served, peer.ErrServerClosed)
		assertNoCMObjects(t)
	}()
	// A client that asks for rdma_cm and never connects: the peer gives up
	// after the session's timeout, says why, and serves the next client.
	t.Run("client never dials", func(t *testing.T) {
		conn, err := oob.Dial(t.Context(), ln.Addr().String(), 5*time.Second)
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SendParams(oob.Params{Op: spec.Write, Transport: spec.RC, Size: 64, Inline: -2, GIDIndex: -1,
			IdleTimeout: time.Second, Flags: oob.FlagCM}))
		pe, err := conn.RecvEndpoint()
		require.NoError(t, err)
		_, err = netip.ParseAddrPort(pe.CMAddr)
		require.NoError(t, err, "the peer names its rdma_cm listener: %q", pe.CMAddr)
		start := time.Now()
		_, err = conn.RecvEndpoint()
		elapsed := time.Since(start)
		var perr *oob.Error
		require.ErrorAs(t, err, &perr)
		assert.Equal(t, oob.CodeResource, perr.Code)
		assert.Contains(t, perr.Msg, "accepting the client's rdma_cm connection: ")
		assert.Contains(t, perr.Msg, pe.CMAddr)
		assert.Greater(t, elapsed, 500*time.Millisecond)
		assert.Less(t, elapsed, 3*time.Second)
		t.Logf("after %v: %v", elapsed.Round(time.Millisecond), err)
	})
	// A stray rdma_cm request (without the session's cookie) comes to the
	// session's listener first: it is refused, and the real client, which
	// has the cookie from the peer's Endpoint, is still accepted.
	t.Run("stray request first", func(t *testing.T) {
		conn, err := oob.Dial(t.Context(), ln.Addr().String(), 5*time.Second)
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SendParams(oob.Params{Op: spec.Write, Transport: spec.RC, Size: 64, Inline: -2, GIDIndex: -1,
			IdleTimeout: 5 * time.Second, Flags: oob.FlagCM}))
		pe, err := conn.RecvEndpoint()
		require.NoError(t, err)
		require.NotZero(t, pe.CMCookie)
		addr, err := netip.ParseAddrPort(pe.CMAddr)
		require.NoError(t, err)
		ecfg := rdmalat.EndpointConfig{Device: c.Device, GIDIndex: c.GIDIndex, Op: spec.Write, Transport: spec.RC, CM: true, MaxSize: 64, Inline: 0}
		stray, err := rdmalat.NewEndpoint(ecfg)
		require.NoError(t, err)
		defer stray.Close()
		_, err = rdmalat.DialCM(stray, t.Context(), addr, pe.CMCookie^0xff)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not the expected client")
		t.Logf("stray: %v", err)

		local, err := rdmalat.NewEndpoint(ecfg)
		require.NoError(t, err)
		defer local.Close()
		_, err = rdmalat.DialCM(local, t.Context(), addr, pe.CMCookie)
		require.NoError(t, err, "the real client is accepted after the stray")
		require.NoError(t, conn.SendEndpoint(rdmalat.WireOf(local)))
		require.NoError(t, conn.RecvBarrier(0))
		require.NoError(t, conn.Close())
		require.NoError(t, local.Close())
		waitActive(t, srv, 0)
	})
	for _, v := range cmVariants {
		t.Run(v.String(), func(t *testing.T) {
			maxSize := 1024
			if v.op.Atomic() {
				maxSize = spec.AtomicSize // rdmapeer takes no other size for atomics
			}
			start := time.Now()
			p, err := rdmalat.DialPeer(t.Context(), ln.Addr().String(), rdmalat.RemoteConfig{
				Endpoint: rdmalat.EndpointConfig{
					Device: c.Device, GIDIndex: c.GIDIndex, Op: v.op, Transport: v.tr, Events: v.events, CM: true,
					MaxSize: maxSize, Inline: c.Inline, MTU: c.MTU,
				},
				Timeout: 10 * time.Second,
			})
			require.NoError(t, err)
			require.Positive(t, p.Local.CMSetupTime(), "connected by rdma_cm")
			t.Logf("%v: session set up in %v, rdma_cm connect %v", v, time.Since(start).Round(time.Millisecond), p.Local.CMSetupTime().Round(time.Millisecond))
			assert.Equal(t, peerDev, p.PeerDevice.Name)
			for _, size := range sizesFor(v, p.Local.Device().MTU) {
				rec, _ := runSamples(t, p, min(size, 1024), 10, 200)
				assert.Equal(t, int64(201), rec.Summary().Count)
			}
			require.NoError(t, p.Close())
			waitActive(t, srv, 0)
		})
	}
}
