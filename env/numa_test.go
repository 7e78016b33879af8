package env

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoNodes is a fake sysfs of a host with CPUs 0-3 on node 0 and 4-7 on
// node 1: mlx5_0's PCI function on node 1, rxe0 on eth1 (a NIC on node 1)
// and rxe1 on veth0 (no device: no node).
func twoNodes() fstest.MapFS {
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s + "\n")} }
	return fstest.MapFS{
		"sys/devices/system/node/online":                        f("0-1"),
		"sys/devices/system/node/node0/cpulist":                 f("0-3"),
		"sys/devices/system/node/node1/cpulist":                 f("4-7"),
		"sys/class/infiniband/mlx5_0/device/numa_node":          f("1"),
		"sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0": f("eth9"),
		"sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0":   f("eth1"),
		"sys/class/net/eth1/device/numa_node":                   f("1"),
		"sys/class/infiniband/rxe1/ports/1/gid_attrs/ndevs/0":   f("veth0"),
		"sys/class/infiniband/bad/device/numa_node":             f("-1"),
		// rxe3 on a virtio-net: its device is virtio1, under the PCI
		// function that has the node (the VM's -numa2 layout).
		"sys/class/infiniband/rxe3/ports/1/gid_attrs/ndevs/0": f("eth2"),
		"sys/class/net/eth2": &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte("../../devices/pci0000:20/0000:20:04.0/virtio1/net/eth2")},
		"sys/devices/pci0000:20/0000:20:04.0/virtio1/net/eth2/address": f("52:54:00:78:00:01"),
		"sys/devices/pci0000:20/0000:20:04.0/numa_node":                f("1"),
		"sys/class/infiniband/rxe4/ports/1/gid_attrs/ndevs/0":          f("veth9"),
		"sys/class/net/veth9":                   &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte("../../devices/virtual/net/veth9")},
		"sys/devices/virtual/net/veth9/address": f("aa:bb:cc:dd:ee:ff"),
	}
}

func TestDeviceNode(t *testing.T) {
	sys := twoNodes()
	assert.Equal(t, 1, DeviceNode(sys, "mlx5_0"), "the PCI function's node")
	assert.Equal(t, 1, DeviceNode(sys, "rxe0"), "a soft device: its netdev's node")
	assert.Equal(t, -1, DeviceNode(sys, "rxe1"), "a netdev with no device: unknown")
	assert.Equal(t, 1, DeviceNode(sys, "rxe3"), "a virtio-net: the PCI function above it")
	assert.Equal(t, -1, DeviceNode(sys, "rxe4"), "a veth: no node above it")
	assert.Equal(t, -1, DeviceNode(sys, "bad"), "numa_node -1 (one-node firmware): unknown")
	assert.Equal(t, -1, DeviceNode(sys, "nothere"))
	assert.Equal(t, -1, DeviceNode(sys, "../../etc"), "no path out of sysfs")
	assert.Equal(t, []int{0, 1}, OnlineNodes(sys))
}

// TestPlace: the rule, with allowed CPUs 1-7 (CPU 0 left out, as a
// cpuset might).
func TestPlace(t *testing.T) {
	sys := twoNodes()
	allowed := []int{1, 2, 3, 4, 5, 6, 7}
	pl, err := Place(sys, "mlx5_0", NUMA{}, allowed)
	require.NoError(t, err)
	assert.Equal(t, Placement{Node: OnNode(1), CPUs: []int{4, 5, 6, 7}}, pl, "the device's node and its allowed CPUs")
	pl, err = Place(sys, "rxe0", NUMA{}, allowed)
	require.NoError(t, err)
	assert.Equal(t, OnNode(1), pl.Node)

	pl, err = Place(sys, "mlx5_0", NUMA{Node: OnNode(0)}, allowed)
	require.NoError(t, err)
	assert.Equal(t, Placement{Node: OnNode(0), CPUs: []int{1, 2, 3}}, pl, "a node named wins over the device's")

	pl, err = Place(sys, "mlx5_0", NUMA{Off: true}, allowed)
	require.NoError(t, err)
	assert.Equal(t, Placement{}, pl, "off: no placement")
	pl, err = Place(sys, "rxe1", NUMA{}, allowed)
	require.NoError(t, err)
	assert.Equal(t, Placement{}, pl, "a device of no known node: no placement")

	pl, err = Place(sys, "mlx5_0", NUMA{}, []int{0, 1})
	require.NoError(t, err)
	assert.Equal(t, Placement{Node: OnNode(1)}, pl, "no allowed CPU on the node: memory still placed, CPUs not")

	_, err = Place(sys, "mlx5_0", NUMA{Node: OnNode(3)}, allowed)
	assert.EqualError(t, err, "RDMABENCH_NUMA=3: this host has NUMA node(s) 0-1; name one of them, device for mlx5_0's, or off")

	// One node: nothing to place, whatever the device says, and node 0
	// named is no error (a script written for several hosts).
	one := twoNodes()
	one["sys/devices/system/node/online"] = &fstest.MapFile{Data: []byte("0\n")}
	for _, n := range []NUMA{{}, {Node: OnNode(0)}} {
		pl, err = Place(one, "mlx5_0", n, allowed)
		require.NoError(t, err)
		assert.Equal(t, Placement{}, pl)
	}
	_, err = Place(one, "mlx5_0", NUMA{Node: OnNode(1)}, allowed)
	assert.ErrorContains(t, err, "this host has NUMA node(s) 0;")
	pl, err = Place(fstest.MapFS{}, "mlx5_0", NUMA{}, allowed)
	require.NoError(t, err)
	assert.Equal(t, Placement{}, pl, "no NUMA in sysfs at all")
}

// TestPinFromPlacement: the CPUs not named come from the node's.
func TestPinFromPlacement(t *testing.T) {
	allowed := []int{0, 1, 2, 3, 4, 5, 6, 7}
	got, err := pinFrom(nil, allowed, []int{0, 1, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, [2]CPU{PinTo(2), PinTo(3)}, got, "the last two of the device's node, not 6,7")
	got, err = pinFrom([]int{1}, allowed, []int{0, 1, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, [2]CPU{PinTo(1), PinTo(3)}, got, "a named initiator; the responder from the node")
	got, err = pinFrom(nil, allowed, []int{5})
	require.NoError(t, err)
	assert.Equal(t, [2]CPU{PinTo(6), PinTo(7)}, got, "one CPU on the node is not two: the old rule")
}

func TestParseNUMA(t *testing.T) {
	for v, want := range map[string]NUMA{
		"": {}, "device": {}, " off ": {Off: true}, "none": {Off: true}, "0": {Node: OnNode(0)}, "3": {Node: OnNode(3)},
	} {
		got, err := parseNUMA(v)
		require.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	for _, v := range []string{"-1", "1024", "node1", "1,2"} {
		_, err := parseNUMA(v)
		assert.ErrorContains(t, err, `want a NUMA node number such as 1`, v)
	}
	c, err := LoadFrom(func(k string) string {
		if k == VarNUMA {
			return "1"
		}
		return ""
	})
	require.NoError(t, err)
	assert.Equal(t, NUMA{Node: OnNode(1)}, c.NUMA)
	assert.Equal(t, "none", Node{}.String())
	assert.Equal(t, "0", OnNode(0).String())
}
