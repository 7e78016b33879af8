//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
	"github.com/rdmabench/rdmabench/verbs"
)

// smapsOf reads field (in kB) of the mapping that holds addr in process
// pid's /proc/PID/smaps: the peer's buffer is in another process, so
// verbs' own readers (of /proc/self) cannot see it.
func smapsOf(t *testing.T, pid int, addr uint64, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	require.NoError(t, err)
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && addr >= l && addr < h
			continue
		}
		if in && len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.Atoi(f[1])
			require.NoError(t, err)
			return kb
		}
	}
	t.Fatalf("no mapping of process %d holds %#x with %s", pid, addr, field)
	return 0
}

// TestTwoNodeHugeBuffers: with RDMABENCH_HUGEPAGES (on, thp) sent to
// rdmapeer in the session's Params, the peer process's buffer is backed
// as asked, read in its /proc/PID/smaps at the address its Endpoint
// gave: KernelPageSize above 4 kB for huge pages, AnonHugePages covering
// the receive half for THP; without the setting, ordinary pages. Round
// trips run on each. The VM boots with hugepages=8 and THP on.
func TestTwoNodeHugeBuffers(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	h, err := verbs.ReadHugePages()
	require.NoError(t, err)
	thp, thpErr := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if !c.InVM && (h.Free < 2 || thpErr != nil || strings.Contains(string(thp), "[never]")) {
		t.Skipf("skipping test: %d huge pages free (2 needed: sysctl vm.nr_hugepages=8), THP %q %v", h.Free, thp, thpErr)
	}
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev, "-cpu", "none")
	pid := pp.cmd.Process.Pid
	for _, tc := range []struct {
		name string
		set  func(*rdmalat.EndpointConfig)
	}{
		{"hugepages", func(e *rdmalat.EndpointConfig) { e.HugePages = true }},
		{"thp", func(e *rdmalat.EndpointConfig) { e.THP = true }},
		{"plain", func(*rdmalat.EndpointConfig) {}},
	} {
		ecfg := rdmalat.EndpointConfig{Device: dev, GIDIndex: -1, MaxSize: 64, Inline: -1}
		tc.set(&ecfg)
		p, err := rdmalat.DialPeer(t.Context(), pp.addr, rdmalat.RemoteConfig{Endpoint: ecfg, Timeout: 5 * time.Second})
		require.NoError(t, err, tc.name)
		addr, size := p.Remote.Addr, p.Remote.Size
		pageKB := smapsOf(t, pid, addr, "KernelPageSize")
		anonHugeKB := smapsOf(t, pid, addr, "AnonHugePages")
		t.Logf("%s: the peer's receive half %#x+%d: KernelPageSize %d kB, AnonHugePages %d kB", tc.name, addr, size, pageKB, anonHugeKB)
		switch tc.name {
		case "hugepages":
			assert.Greater(t, pageKB, 4, "the peer's buffer is in huge pages")
		case "thp":
			assert.Equal(t, 4, pageKB)
			assert.GreaterOrEqual(t, anonHugeKB<<10, size, "the peer's receive half is in transparent huge pages")
		default:
			assert.Equal(t, 4, pageKB)
			assert.Zero(t, anonHugeKB, "without the setting, ordinary pages")
		}
		_, ran := runRoundTrips(t, p, 64, 20, 100)
		assert.Positive(t, ran)
		require.NoError(t, p.Close())
	}
}

// TestRailsNUMA: in a guest of two NUMA nodes with rxe2 on node 1 (rxevm
// -numa2; make test-vm runs it so), one rdmapeer serving rxe0 (on a veth:
// no node) and rxe2, without -cpu, answers each rail on its own CPU: rxe2
// on the last CPU of node 1, rxe0 on the last CPU the process may use
// (vCPU 3, node 0), where a single rule for both rails would have put
// rxe0 on rxe2's node too. Each session's Endpoint says its CPU.
func TestRailsNUMA(t *testing.T) {
	testenv.MustHaveRDMA(t)
	nodes := env.OnlineNodes(os.DirFS("/"))
	if len(nodes) < 2 || env.DeviceNode(os.DirFS("/"), "rxe2") != 1 {
		t.Skip("skipping test: needs two NUMA nodes and rxe2 on node 1 (rxevm -numa2, as make test-vm runs it)")
	}
	require.Equal(t, -1, env.DeviceNode(os.DirFS("/"), "rxe0"), "rxe0 is on a veth, of no node")
	b, err := os.ReadFile("/sys/devices/system/node/node1/cpulist")
	require.NoError(t, err)
	node1, err := env.ParseCPUList(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	last := allowed[len(allowed)-1]
	require.NotContains(t, node1, last, "the -numa2 layout: the last vCPU is node 0's")

	pp := startPeer(t, "rxe2,rxe0")
	cpuOf := map[string]int{}
	for _, dev := range []string{"rxe2", "rxe0"} {
		p := dialRail(t, pp.addr, dev, dev)
		id, pinned := p.PeerCPU.ID()
		require.True(t, pinned, "rail %s: the peer pins its answering thread", dev)
		cpuOf[dev] = id
		_, ran := runRoundTrips(t, p, 64, 20, 100)
		assert.Positive(t, ran)
		require.NoError(t, p.Close())
	}
	t.Logf("answering CPUs: %v; node 1 %v; the last allowed %d", cpuOf, node1, last)
	assert.Equal(t, node1[len(node1)-1], cpuOf["rxe2"], "rxe2 answers on node 1's last CPU")
	assert.Equal(t, last, cpuOf["rxe0"], "rxe0, of no node, on the last CPU allowed")
	assert.Contains(t, pp.log.String(), "NUMA node 1 (rxe2's): answering on CPUs "+strconv.Itoa(node1[len(node1)-1]))
	assert.Contains(t, pp.log.String(), "(rxe0's sessions: CPU "+strconv.Itoa(last)+")")
}
