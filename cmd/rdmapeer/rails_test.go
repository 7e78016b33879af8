package main

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
)

// TestTwoNodeRails: one rdmapeer process serves two devices (rxe0 and rxe1
// in the VM, on the two ends of a veth); each rail's session names the
// peer's device, crossed (rxe0 meets the peer's rxe1, rxe1 its rxe0), and
// is answered there: the peer's Endpoint carries that device's name and
// GID, and its log line names it. A device it does not serve is refused
// with the list it serves.
func TestTwoNodeRails(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, dev+","+peerDev, "-cpu", "none")
	gids := map[string][16]byte{}
	for _, rail := range [][2]string{{dev, peerDev}, {peerDev, dev}} {
		local, remote := rail[0], rail[1]
		p := dialRail(t, pp.addr, local, remote)
		assert.Equal(t, remote, p.PeerDevice.Name, "rail %s: the session opened on the device it named", local)
		gids[remote] = p.Remote.GID
		_, ran := runRoundTrips(t, p, 64, 20, 200)
		require.NoError(t, p.Close())
		line := pp.log.wait(t, 10*time.Second, "session ", "device="+remote+" ", "result=")
		assert.Contains(t, line, "op=write max-size=64 sizes=64 runs=1 ")
		assert.Contains(t, line, "round-trips="+strconv.FormatUint(ran, 10)+" ")
		assert.Contains(t, line, "result=ok")
		t.Logf("rail %s -> peer %s (GID %v): %s", local, remote, netip.AddrFrom16(p.Remote.GID), line)
	}
	// Each side of the veth has its own address, so its own GID: the
	// peer's endpoint was on the device named, not on its first.
	assert.NotEqual(t, gids[dev], gids[peerDev], "the two sessions' peer GIDs")

	_, err := rdmalat.DialPeer(t.Context(), pp.addr, rdmalat.RemoteConfig{
		Endpoint:   rdmalat.EndpointConfig{Device: dev, GIDIndex: -1, MaxSize: 64, Inline: -1},
		PeerDevice: "rxe9", Timeout: 5 * time.Second,
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, rdmalat.ErrPeerParams)
	assert.Contains(t, err.Error(), `device "rxe9": this rdmapeer serves `+dev+","+peerDev+" (rdmapeer -device)")
	assert.Contains(t, pp.log.String(), "devices "+dev+","+peerDev+" (the first unless a client names another)")
}

// dialRail opens a session from device local to the peer's device remote.
func dialRail(t *testing.T, addr, local, remote string) *rdmalat.Pair {
	t.Helper()
	p, err := rdmalat.DialPeer(t.Context(), addr, rdmalat.RemoteConfig{
		Endpoint:   rdmalat.EndpointConfig{Device: local, GIDIndex: -1, MaxSize: 64, Inline: -1},
		PeerDevice: remote, Timeout: 5 * time.Second,
	})
	require.NoError(t, err, "rail %s to the peer's %s", local, remote)
	t.Cleanup(func() { p.Close() })
	return p
}
