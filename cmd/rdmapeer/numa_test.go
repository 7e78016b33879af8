package main

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

// railsOnTwoNodes is the sysfs of a two-socket host: CPUs 0-3 on node 0,
// 4-7 on node 1; mlx5_0 and mlx5_2 on node 1, mlx5_1 on node 0, mlx5_9 of
// no known node.
func railsOnTwoNodes() fstest.MapFS {
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s + "\n")} }
	return fstest.MapFS{
		"sys/devices/system/node/online":               f("0-1"),
		"sys/devices/system/node/node0/cpulist":        f("0-3"),
		"sys/devices/system/node/node1/cpulist":        f("4-7"),
		"sys/class/infiniband/mlx5_0/device/numa_node": f("1"),
		"sys/class/infiniband/mlx5_1/device/numa_node": f("0"),
		"sys/class/infiniband/mlx5_2/device/numa_node": f("1"),
		"sys/class/infiniband/mlx5_9/device/numa_node": f("-1"),
	}
}

// TestAnsweringCPUs: without -cpu each rail answers on the last allowed
// CPU of its own device's NUMA node (the first device's CPUs are the
// default, a rail that answers elsewhere has its own); a device of no
// known node, or a node with no allowed CPU, answers on the default of a
// host without NUMA; RDMABENCH_NUMA naming a node puts every rail there.
func TestAnsweringCPUs(t *testing.T) {
	sys := railsOnTwoNodes()
	place := func(n env.NUMA, allowed []int, devs ...string) []env.Placement {
		var ps []env.Placement
		for _, d := range devs {
			p, err := env.Place(sys, d, n, allowed)
			require.NoError(t, err)
			ps = append(ps, p)
		}
		return ps
	}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	def := []int{7} // the last CPU this process may use

	devs := []string{"mlx5_0", "mlx5_1", "mlx5_2"}
	first, rails := answeringCPUs(devs, place(env.NUMA{}, all, devs...), def)
	assert.Equal(t, []int{7}, first, "mlx5_0: node 1's last")
	assert.Equal(t, map[string][]int{"mlx5_1": {3}}, rails, "mlx5_1 on node 0's last; mlx5_2 shares node 1's")

	devs = []string{"mlx5_1", "mlx5_0"}
	first, rails = answeringCPUs(devs, place(env.NUMA{}, all, devs...), def)
	assert.Equal(t, []int{3}, first, "the first rail's node, whichever it is")
	assert.Equal(t, map[string][]int{"mlx5_0": {7}}, rails)

	devs = []string{"mlx5_0", "mlx5_2"}
	first, rails = answeringCPUs(devs, place(env.NUMA{}, all, devs...), def)
	assert.Equal(t, []int{7}, first)
	assert.Nil(t, rails, "both rails on one node: one CPU list")

	devs = []string{"mlx5_1", "mlx5_9"}
	first, rails = answeringCPUs(devs, place(env.NUMA{}, all, devs...), def)
	assert.Equal(t, []int{3}, first)
	assert.Equal(t, map[string][]int{"mlx5_9": {7}}, rails, "no known node: the default")

	devs = []string{"mlx5_0", "mlx5_1"}
	first, rails = answeringCPUs(devs, place(env.NUMA{}, []int{0, 1}, devs...), []int{1})
	assert.Equal(t, []int{1}, first, "node 1 has no allowed CPU: the default")
	assert.Nil(t, rails, "mlx5_1 on node 0's last allowed, CPU 1: the same")

	first, rails = answeringCPUs(devs, place(env.NUMA{Node: env.OnNode(0)}, all, devs...), def)
	assert.Equal(t, []int{3}, first, "RDMABENCH_NUMA=0: every rail on node 0")
	assert.Nil(t, rails)

	first, rails = answeringCPUs(devs, place(env.NUMA{Off: true}, all, devs...), def)
	assert.Equal(t, def, first, "RDMABENCH_NUMA=off: as on one node")
	assert.Nil(t, rails)
}
