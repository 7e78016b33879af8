package rdmalat_test

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
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
	c := testenv.MustHaveRDMA(t)
	if !c.InVM {
		t.Skip("skipping: adds network devices and an rxe device; runs in the soft-RoCE VM only (make test-vm)")
	}
	const (
		ifA, ifB, vlan = "rbvl0", "rbvl1", "rbvl0.7"
		dev            = "rxevlan"
		vlanV4, baseV4 = "192.168.79.1", "192.168.80.1"
	)
	sh := func(name string, args ...string) {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	}
	sh(guestIP, "link", "add", ifA, "type", "veth", "peer", "name", ifB)
	t.Cleanup(func() {
		// Deleting one end removes both, the VLAN on it, their addresses
		// and GIDs.
		if out, err := exec.Command(guestIP, "link", "del", ifA).CombinedOutput(); err != nil {
			t.Errorf("ip link del %s: %v: %s", ifA, err, out)
		}
	})
	sh(guestIP, "link", "add", "link", ifA, "name", vlan, "type", "vlan", "id", "7")
	for _, i := range []string{ifA, vlan} {
		// No duplicate address detection: link-local GIDs at once.
		sh("/bin/sh", "-c", "echo 0 >/proc/sys/net/ipv6/conf/"+i+"/accept_dad")
	}
	for _, i := range []string{ifA, ifB, vlan} {
		sh(guestIP, "link", "set", i, "up")
	}
	sh(guestRDMA, "link", "add", dev, "type", "rxe", "netdev", ifA)
	t.Cleanup(func() {
		if out, err := exec.Command(guestRDMA, "link", "delete", dev).CombinedOutput(); err != nil {
			t.Errorf("rdma link delete %s: %v: %s", dev, err, out)
		}
	})
	for i := 1; i <= 10; i++ {
		sh(guestIP, "-6", "addr", "add", fmt.Sprintf("fd00:79::%x/64", i), "dev", vlan, "nodad")
	}
	sh(guestIP, "addr", "add", vlanV4+"/24", "dev", vlan)
	sh(guestIP, "addr", "add", baseV4+"/24", "dev", ifA)
	vlanIf, err := net.InterfaceByName(vlan)
	require.NoError(t, err)
	baseIf, err := net.InterfaceByName(ifA)
	require.NoError(t, err)

	ctx, err := verbs.Open(dev)
	require.NoError(t, err)
	defer func() { require.NoError(t, ctx.Close()) }()
	var gids []verbs.GID
	var onVLAN, onBase verbs.GID
	found := func(ip string, g verbs.GID) bool {
		return net.IP(g.Raw[:]).Equal(net.ParseIP(ip)) && g.Type == verbs.GIDTypeRoCEv2
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pa, err := ctx.QueryPort(1)
		require.NoError(t, err)
		gids, err = ctx.GIDs(1, 0)
		require.NoError(t, err)
		for _, g := range gids {
			switch {
			case found(vlanV4, g):
				onVLAN = g
			case found(baseV4, g):
				onBase = g
			}
		}
		if !onVLAN.IsZero() && !onBase.IsZero() && pa.State == verbs.PortActive {
			break
		}
	}
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
