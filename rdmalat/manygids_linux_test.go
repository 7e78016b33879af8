package rdmalat_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/verbs"
)

// manyGIDs builds, in the VM, the GID table of issue 39: an rxe device on
// a veth of its own whose interface got ten IPv6 addresses before its
// IPv4 address, so that the IPv4 RoCE v2 GID sits past index 8 (11 on
// rxe, which fills its table in the order addresses appear). It returns
// the device and the indexes of that IPv4 GID and of the first IPv6 one.
// The veth pair and the device are removed when the test ends; rxe0 and
// rxe1 are not touched.
func manyGIDs(t *testing.T) (dev string, v4Index, v6Index int) {
	t.Helper()
	g := inGuest(t, "adds a network device and an rxe device")
	const (
		ifA, ifB = "rbgid0", "rbgid1"
		v4, v6   = "192.168.78.1", "fd00:78::1"
	)
	dev = "rxegid"
	g.veth(ifA, ifB)
	g.noDAD(ifA)
	g.up(ifA, ifB)
	g.rxe(dev, ifA)
	for i := 1; i <= 10; i++ {
		g.run(guestIP, "-6", "addr", "add", fmt.Sprintf("fd00:78::%x/64", i), "dev", ifA, "nodad")
	}
	g.run(guestIP, "addr", "add", v4+"/24", "dev", ifA)

	v4Index, v6Index = -1, -1
	gids := g.waitGIDs(dev, func(gids []verbs.GID) bool {
		return !roceV2GID(gids, v4).IsZero() && !roceV2GID(gids, v6).IsZero()
	})
	if gv4, gv6 := roceV2GID(gids, v4), roceV2GID(gids, v6); !gv4.IsZero() && !gv6.IsZero() {
		v4Index, v6Index = gv4.Index, gv6.Index
	}
	require.True(t, v4Index >= 0 && v6Index >= 0, "GIDs of %s never showed %s and fd00:78::1: %v", dev, v4, gids)
	t.Logf("%s GID table: %v (IPv4 at %d)", dev, gids, v4Index)
	require.Greater(t, v4Index, 8, "the IPv4 GID must land past the first 8 entries for this test to mean anything")
	return dev, v4Index, v6Index
}

// TestManyGIDs: with the IPv4 RoCE v2 GID at index 11, behind ten IPv6
// ones, the endpoint still picks it, as perftest does, and a loopback pair
// on it measures; two endpoints forced to different IP versions fail at
// Connect, at once, saying which GIDs and what to set.
func TestManyGIDs(t *testing.T) {
	dev, v4Index, v6Index := manyGIDs(t)

	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{Device: dev, GIDIndex: rdmalat.GIDBest, MaxSize: 64},
		Timeout:  5 * time.Second,
	})
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Close()) }()
	assert.Equal(t, v4Index, p.Local.Device().GIDIndex, "the best GID is the IPv4 RoCE v2 one")
	assert.Equal(t, v4Index, p.PeerDevice.GIDIndex)
	run, err := p.Start(2, 0)
	require.NoError(t, err)
	for range 20 {
		_, err := run.Next()
		require.NoError(t, err)
	}
	require.NoError(t, run.Close())

	open := func(gidIndex int) *rdmalat.Endpoint {
		ep, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: dev, GIDIndex: gidIndex, MaxSize: 64})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, ep.Close()) })
		return ep
	}
	v6 := open(v6Index)
	best := open(rdmalat.GIDBest)
	require.Equal(t, v6Index, v6.Device().GIDIndex)
	start := time.Now()
	err = v6.Connect(best.Info())
	require.ErrorIs(t, err, rdmalat.ErrGIDFamily)
	assert.Contains(t, err.Error(), "is IPv6 (fd00:78::1) but the peer's is IPv4 (192.168.78.1): set RDMABENCH_GID_INDEX on one side")
	err = best.Connect(v6.Info())
	require.ErrorIs(t, err, rdmalat.ErrGIDFamily)
	assert.Contains(t, err.Error(), "is IPv4 (192.168.78.1) but the peer's is IPv6 (fd00:78::1)")
	assert.Less(t, time.Since(start), time.Second, "refused before any packet is sent")
}
