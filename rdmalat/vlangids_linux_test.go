package rdmalat_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestVLANGIDs: an rxe device whose interface carries a VLAN (802.1Q, id
// 7) with ten IPv6 addresses and then an IPv4 one, all on the VLAN, and an
// IPv4 address on the untagged interface added after. The kernel lists the
// VLAN's addresses in the port's GID table with the VLAN's netdev, the
// IPv4 ones past index 8. The benchmark scores a VLAN GID as perftest does,
// by address and type alone (the kernel tags the frames from the GID's
// netdev): the first IPv4 RoCE v2 GID wins, here the VLAN's, the untagged
// one losing the tie by its higher index; a loopback pair measures on it.
func TestVLANGIDs(t *testing.T) {
	g := inGuest(t, "adds network devices and an rxe device")
	const (
		ifA, ifB, vlan = "rbvl0", "rbvl1", "rbvl0.7"
		dev            = "rxevlan"
		vlanV4, baseV4 = "192.168.79.1", "192.168.80.1"
	)
	g.veth(ifA, ifB) // deleting it removes the VLAN on it too
	g.run(guestIP, "link", "add", "link", ifA, "name", vlan, "type", "vlan", "id", "7")
	g.noDAD(ifA, vlan)
	g.up(ifA, ifB, vlan)
	g.rxe(dev, ifA)
	for i := 1; i <= 10; i++ {
		g.run(guestIP, "-6", "addr", "add", fmt.Sprintf("fd00:79::%x/64", i), "dev", vlan, "nodad")
	}
	g.run(guestIP, "addr", "add", vlanV4+"/24", "dev", vlan)
	g.run(guestIP, "addr", "add", baseV4+"/24", "dev", ifA)
	vlanIf, err := net.InterfaceByName(vlan)
	require.NoError(t, err)
	baseIf, err := net.InterfaceByName(ifA)
	require.NoError(t, err)

	gids := g.waitGIDs(dev, func(gids []verbs.GID) bool {
		return !roceV2GID(gids, vlanV4).IsZero() && !roceV2GID(gids, baseV4).IsZero()
	})
	onVLAN, onBase := roceV2GID(gids, vlanV4), roceV2GID(gids, baseV4)
	require.False(t, onVLAN.IsZero() || onBase.IsZero(), "GIDs of %s never showed %s and %s: %v", dev, vlanV4, baseV4, gids)
	t.Logf("%s GID table: %v (VLAN's IPv4 at %d, the untagged one at %d)", dev, gids, onVLAN.Index, onBase.Index)
	require.Greater(t, onVLAN.Index, 8, "the VLAN's IPv4 GID must land past the first 8 entries for this test to mean anything")
	require.Greater(t, onBase.Index, onVLAN.Index)
	assert.Equal(t, vlanIf.Index, onVLAN.IfIndex, "the VLAN's GID carries the VLAN's netdev")
	assert.Equal(t, baseIf.Index, onBase.IfIndex)

	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{Device: dev, GIDIndex: rdmalat.GIDBest, MaxSize: 64},
		Timeout:  5 * time.Second,
	})
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Close()) }()
	assert.Equal(t, onVLAN.Index, p.Local.Device().GIDIndex, "the best GID is the first IPv4 RoCE v2 one, the VLAN's")
	run, err := p.Start(2, 0)
	require.NoError(t, err)
	for range 20 {
		_, err := run.Next()
		require.NoError(t, err)
	}
	require.NoError(t, run.Close())
}
