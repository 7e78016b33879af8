package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	_, err = LoadFrom(func(k string) string {
		return map[string]string{VarDevice: "mlx5_0,mlx5_1", VarPeer: "node2"}[k]
	})
	assert.ErrorContains(t, err, "RDMABENCH_DEVICE=mlx5_0,mlx5_1 with RDMABENCH_PEER: rdmapeer answers on one device")
}
