package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/envtest"
)

func TestParseDevices(t *testing.T) {
	for _, tc := range []struct {
		in, first string
		rails     []string
		err       string
	}{
		{"", "", nil, ""},
		{"mlx5_0", "mlx5_0", nil, ""},
		{" rxe0 , rxe1 ", "rxe0", []string{"rxe0", "rxe1"}, ""},
		{"all", "", []string{"all"}, ""},
		{"rxe0,,rxe1", "", nil, `RDMABENCH_DEVICE="rxe0,,rxe1": "" is not a device name; write devices separated by commas, e.g. RDMABENCH_DEVICE=mlx5_0,mlx5_1, or RDMABENCH_DEVICE=all for every active one`},
		{"rxe0,all", "", nil, `"all" is not a device name`},
		{"rxe0,rxe0", "", nil, `RDMABENCH_DEVICE="rxe0,rxe0": rxe0 is named twice; name each rail once`},
	} {
		first, rails, err := parseDevices(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.first, first, tc.in)
		assert.Equal(t, tc.rails, rails, tc.in)
	}
}

func TestRailDevices(t *testing.T) {
	p := fakeProbe{names: []string{"mlx5_0", "mlx5_1", "mlx5_2"}, active: map[string]bool{"mlx5_0": true, "mlx5_2": true}}
	load := func(v string) Config {
		c, err := LoadFrom(func(k string) string {
			if k == VarDevice {
				return v
			}
			return ""
		})
		require.NoError(t, err)
		return c
	}
	rails, err := load("mlx5_0").RailDevices(p)
	require.NoError(t, err)
	assert.Nil(t, rails, "one device: no rails, names unchanged")

	c := load("mlx5_2,mlx5_0")
	assert.Equal(t, "mlx5_2", c.Device, "the tests take the first rail")
	rails, err = c.RailDevices(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx5_2", "mlx5_0"}, rails, "in the order given")

	rails, err = load("all").RailDevices(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx5_0", "mlx5_2"}, rails, "every active device")

	_, err = load("mlx5_0,mlx5_1").RailDevices(p)
	assert.EqualError(t, err, "RDMABENCH_DEVICE=mlx5_0,mlx5_1: mlx5_1: mlx5_1 has no ACTIVE port")
	_, err = load("mlx5_0,mlx5_9").RailDevices(p)
	assert.EqualError(t, err, "RDMABENCH_DEVICE=mlx5_0,mlx5_9: no such RDMA device mlx5_9 (present: [mlx5_0 mlx5_1 mlx5_2])")
	_, err = load("all").RailDevices(fakeProbe{names: []string{"mlx5_1"}})
	assert.ErrorIs(t, err, ErrNoDevice)

}

// TestRailPeer: each rail meets the peer's device of the same name in
// two-node mode, itself in loopback mode, or RDMABENCH_PEER_DEVICE's
// device i; a list that does not match the rails is refused with what to
// type.
func TestRailPeer(t *testing.T) {
	load := func(kv ...string) (Config, error) { return LoadFrom(envtest.Getenv(kv...)) }
	rails := []string{"mlx5_0", "mlx5_1"}
	for _, tc := range []struct {
		name      string
		kv        []string
		want      []string // each rail's peer device
		loadErr   string
		railError string
	}{
		{"two-node, same names", []string{VarDevice, "mlx5_0,mlx5_1", VarPeer, "node2"}, []string{"mlx5_0", "mlx5_1"}, "", ""},
		{"loopback, itself", []string{VarDevice, "mlx5_0,mlx5_1"}, []string{"", ""}, "", ""},
		{"two-node, crossed", []string{VarDevice, "mlx5_0,mlx5_1", VarPeer, "node2", VarPeerDevice, "mlx5_1, mlx5_0"}, []string{"mlx5_1", "mlx5_0"}, "", ""},
		{"loopback, crossed", []string{VarDevice, "mlx5_0,mlx5_1", VarPeerDevice, "mlx5_1,mlx5_0"}, []string{"mlx5_1", "mlx5_0"}, "", ""},
		{"two-node, by position onto other names", []string{VarDevice, "mlx5_0,mlx5_1", VarPeer, "node2", VarPeerDevice, "mlx5_2,mlx5_3"}, []string{"mlx5_2", "mlx5_3"}, "", ""},
		{"all, a list: ambiguous", []string{VarDevice, "all", VarPeer, "node2", VarPeerDevice, "ib0,ib1"}, nil,
			"RDMABENCH_PEER_DEVICE=ib0,ib1 with RDMABENCH_DEVICE=all: a list pairs rails by position, and all leaves their order to the host; name the rails in the order of the list (RDMABENCH_DEVICE=DEV0,DEV1 RDMABENCH_PEER_DEVICE=ib0,ib1), or unset RDMABENCH_PEER_DEVICE to pair each rail with the peer's device of its name", ""},
		{"all, one peer device", []string{VarDevice, "all", VarPeer, "node2", VarPeerDevice, "ib0"}, nil, "",
			"RDMABENCH_PEER_DEVICE=ib0 names 1 devices for the 2 rails of RDMABENCH_DEVICE=all (mlx5_0,mlx5_1): name one per rail, in the same order, or unset it"},
		{"too few", []string{VarDevice, "mlx5_0,mlx5_1", VarPeer, "node2", VarPeerDevice, "mlx5_3"}, nil,
			"RDMABENCH_PEER_DEVICE=mlx5_3 names 1 devices for the 2 rails of RDMABENCH_DEVICE=mlx5_0,mlx5_1: name one per rail, in the same order (rail i meets the peer's device i), or unset it", ""},
		{"a list without rails", []string{VarDevice, "mlx5_0", VarPeerDevice, "mlx5_0,mlx5_1"}, nil,
			`RDMABENCH_PEER_DEVICE="mlx5_0,mlx5_1": a list pairs rails, and RDMABENCH_DEVICE names one device; name one peer device, or the rails in RDMABENCH_DEVICE (e.g. RDMABENCH_DEVICE=mlx5_0,mlx5_1 RDMABENCH_PEER_DEVICE=mlx5_2,mlx5_3)`, ""},
		{"empty name", []string{VarDevice, "mlx5_0,mlx5_1", VarPeerDevice, "mlx5_0,"}, nil,
			`RDMABENCH_PEER_DEVICE="mlx5_0,": "" is not a device name; write one device per rail of RDMABENCH_DEVICE, separated by commas, e.g. RDMABENCH_PEER_DEVICE=mlx5_0,mlx5_1`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(tc.kv...)
			if tc.loadErr != "" {
				assert.EqualError(t, err, tc.loadErr)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, r := range rails {
				p, err := c.RailPeer(rails, r)
				if tc.railError != "" {
					assert.EqualError(t, err, tc.railError)
					return
				}
				require.NoError(t, err)
				got = append(got, p)
			}
			assert.Equal(t, tc.want, got)
		})
	}
	c, err := load(VarDevice, "mlx5_0,mlx5_1", VarPeer, "node2")
	require.NoError(t, err)
	_, err = c.RailPeer(rails, "mlx5_7")
	assert.EqualError(t, err, "RDMABENCH_DEVICE: mlx5_7 is not one of the rails mlx5_0,mlx5_1")
}
