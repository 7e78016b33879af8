package rdmacm

import (
	"errors"
	"net/netip"
	"os"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/verbs"
)

// ibHost is the sysfs of an mlx5 InfiniBand function with two ports'
// IPoIB interfaces, a P_Key child and an Ethernet interface on the same
// function (a VPI card), as /sys shows them.
func ibHost() fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, v := range map[string][2]string{
		"ib0": {"32", "0"}, "ib0.8001": {"32", "0"}, "ib1": {"32", "1"}, "enp1s0f0": {"1", "0"},
	} {
		fsys["sys/class/infiniband/mlx5_0/device/net/"+name+"/type"] = &fstest.MapFile{Data: []byte(v[0] + "\n")}
		fsys["sys/class/infiniband/mlx5_0/device/net/"+name+"/dev_port"] = &fstest.MapFile{Data: []byte(v[1] + "\n")}
	}
	return fsys
}

// TestIPoIBAddr: on InfiniBand, rdma_cm's address is the port's IPoIB
// interface's, IPv4 first; without one the error says what to do.
func TestIPoIBAddr(t *testing.T) {
	assert.Equal(t, []string{"ib0", "ib0.8001"}, ipoibNetdevs(ibHost(), "mlx5_0", 1))
	assert.Equal(t, []string{"ib1"}, ipoibNetdevs(ibHost(), "mlx5_0", 2))
	assert.Empty(t, ipoibNetdevs(ibHost(), "mlx5_1", 1))

	addrs := map[string][]netip.Addr{
		"ib0":      {netip.MustParseAddr("fe80::202:c903:1"), netip.MustParseAddr("10.10.0.5")},
		"ib0.8001": {netip.MustParseAddr("10.20.0.5")},
	}
	of := func(n string) []netip.Addr { return addrs[n] }
	a, err := ipoibAddr("op", ibHost(), "mlx5_0", 1, of)
	require.NoError(t, err)
	assert.Equal(t, "10.10.0.5", a.String())

	_, err = ipoibAddr("op", ibHost(), "mlx5_0", 2, of)
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist), "EADDRNOTAVAIL matches os.ErrNotExist")
	assert.Contains(t, err.Error(), "its IPoIB interface ib1 has no IP address, which rdma_cm needs: ip addr add ADDR/PREFIX dev ib1")

	_, err = ipoibAddr("op", ibHost(), "mlx5_1", 1, of)
	assert.ErrorContains(t, err, "has no IPoIB interface")
}

func TestPickAddr(t *testing.T) {
	p := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, tc := range []struct {
		in   []netip.Addr
		want string
	}{
		{p("fe80::1", "2001:db8::1", "10.0.0.1"), "10.0.0.1"},
		{p("fe80::1", "2001:db8::1"), "2001:db8::1"},
		{p("169.254.0.7", "10.0.0.1"), "10.0.0.1"},
		{p("fe80::1"), "fe80::1"},
		{p("127.0.0.1", "::1"), ""},
		{nil, ""},
	} {
		a, ok := pickAddr(tc.in)
		if tc.want == "" {
			assert.False(t, ok, "%v", tc.in)
			continue
		}
		assert.True(t, ok)
		assert.Equal(t, tc.want, a.String(), "%v", tc.in)
	}
}

// TestUDAHOnInfiniBand: a UD listener addresses its peer by LID on
// InfiniBand (no GRH within a subnet) and by GID on RoCE; the LID travels
// in the private data after the 56 bytes an RC request is limited to.
func TestUDAHOnInfiniBand(t *testing.T) {
	peer := PeerInfo{QPN: 0x12, QKey: udpQKey, LID: 0x1c}
	copy(peer.GID[:], []byte{0xfe, 0x80, 15: 1})
	b := peer.marshal()
	assert.Len(t, b, peerInfoLen+2)
	got, err := unmarshalPeerInfo(b)
	require.NoError(t, err)
	assert.Equal(t, uint16(0x1c), got.LID)

	ib := udAH(1, true, got, 0)
	assert.Equal(t, verbs.AHAttr{Port: 1, DLID: 0x1c}, ib)
	roce := udAH(1, false, got, 3)
	assert.Equal(t, verbs.AHAttr{Port: 1, DGID: got.GID, SGIDIndex: 3}, roce)

	peer.LID = 0
	assert.Len(t, peer.marshal(), peerInfoLen, "no LID: fits an RC request")
}
