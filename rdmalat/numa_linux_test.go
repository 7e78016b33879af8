//go:build linux

package rdmalat_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// deviceOnNode returns the first RDMA device whose NUMA node is node, or "".
func deviceOnNode(node int) string {
	ents, _ := os.ReadDir("/sys/class/infiniband")
	for _, e := range ents {
		if env.DeviceNode(os.DirFS("/"), e.Name()) == node {
			return e.Name()
		}
	}
	return ""
}

// nodeCPUs returns the CPUs of NUMA node n.
func nodeCPUs(t *testing.T, n int) []int {
	t.Helper()
	b, err := os.ReadFile("/sys/devices/system/node/node" + strconv.Itoa(n) + "/cpulist")
	require.NoError(t, err)
	cpus, err := env.ParseCPUList(string(b))
	require.NoError(t, err)
	return cpus
}

// TestNUMAPlacement: in a guest with two NUMA nodes and rxe2 on a NIC of
// node 1 (rxevm -numa2; make test-vm runs it so), a pair on rxe2 pins its
// two threads to node 1's CPUs, where the rule without NUMA (the last two
// allowed) would straddle the nodes, populates its buffers on node 1 and
// says so in a config line; RDMABENCH_NUMA=off brings the old rule back,
// line and all; CPUs named on node 0 get hostinfo's numa warning.
func TestNUMAPlacement(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	dev := deviceOnNode(1)
	if len(env.OnlineNodes(os.DirFS("/"))) < 2 || dev == "" {
		t.Skip("skipping test: needs two NUMA nodes and an RDMA device on node 1 (rxevm -numa2, as make test-vm runs it)")
	}
	c.Device, c.PeerDevice, c.CPUs, c.NoPin, c.NUMA = dev, "", nil, false, env.NUMA{}
	node0, node1 := nodeCPUs(t, 0), nodeCPUs(t, 1)
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	old := allowed[len(allowed)-2:]
	t.Logf("%s on node 1; node 0 CPUs %v, node 1 CPUs %v; the last two allowed %v", dev, node0, node1, old)

	newPair := func(c env.Config) *rdmalat.Pair {
		p, err := testenv.NewPair(c, spec.Write, 64)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, p.Close()) })
		return p
	}
	pinned := func(p *rdmalat.Pair) []int {
		var ids []int
		for _, cpu := range p.CPUs {
			id, ok := cpu.ID()
			require.True(t, ok, "pinned")
			ids = append(ids, id)
		}
		return ids
	}

	p := newPair(c)
	cpus := pinned(p)
	for _, id := range cpus {
		assert.Contains(t, node1, id, "the default CPUs %v are the NIC's node's", cpus)
	}
	assert.NotEqual(t, old, cpus, "the rule without NUMA would have taken %v", old)
	assert.Equal(t, env.OnNode(1), p.Local.MemNode())
	for name, buf := range map[string][]byte{"initiator": rdmalat.BufferOf(p.Local), "responder": rdmalat.PeerReceiveHalf(p)} {
		nodes, err := env.PageNodes(buf)
		require.NoError(t, err)
		require.NotEmpty(t, nodes)
		for i, n := range nodes {
			assert.Equal(t, 1, n, "%s buffer page %d of %d", name, i, len(nodes))
		}
	}
	assert.Contains(t, testenv.ConfigLines(p, c), "rdmabench-numa-node: 1")
	b := rdmalattest.NewMetricsB(t, 200)
	rdmalat.Measure(b, p, 64, 10, nil)
	assert.Positive(t, b.Metrics["p50-ns"], "the placed pair measures")

	// RDMABENCH_NUMA=off: the last two allowed CPUs, no line.
	off := c
	off.NUMA = env.NUMA{Off: true}
	p2 := newPair(off)
	assert.Equal(t, old, pinned(p2))
	_, placed := p2.Local.MemNode().ID()
	assert.False(t, placed)
	for _, l := range testenv.ConfigLines(p2, off) {
		assert.False(t, strings.HasPrefix(l, "rdmabench-numa-node:"), l)
	}

	// CPUs named on node 0: the warning, with the node's CPUs to use.
	require.GreaterOrEqual(t, len(node0), 2)
	r := hostinfo.Collect(hostinfo.Options{Device: dev, CPUs: node0[:2]})
	i := slices.IndexFunc(r.Warnings, func(w hostinfo.Warning) bool { return w.Check == "numa" })
	require.GreaterOrEqual(t, i, 0, "a numa warning for CPUs %v: %v", node0[:2], r.Warnings)
	t.Logf("%s", r.Warnings[i].Format())
	assert.Contains(t, r.Warnings[i].Problem, dev+" is on NUMA node 1 but measuring CPUs")
	assert.Contains(t, r.Warnings[i].Fix, "pin to CPUs of node 1 ("+env.FormatCPUList(node1)+")")
}
