package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// The CPU configuration lines print as they did when a CPU was an int
// with -1 for unpinned: both threads' CPUs in list form in loopback mode
// (sorted: "3,2" prints 2-3), the initiator's alone in two-node mode,
// "unpinned" for none; CPU 0 is a CPU.
func TestCPULines(t *testing.T) {
	for _, tc := range []struct {
		pair       rdmalat.Pair
		cpus, peer string
	}{
		{rdmalat.Pair{Mode: "loopback", CPUs: [2]env.CPU{env.PinTo(3), env.PinTo(2)}}, "2-3", ""},
		{rdmalat.Pair{Mode: "loopback", CPUs: [2]env.CPU{env.PinTo(0), env.PinTo(5)}}, "0,5", ""},
		{rdmalat.Pair{Mode: "loopback"}, "unpinned", ""},
		{rdmalat.Pair{Mode: "two-node", CPUs: [2]env.CPU{env.PinTo(2)}, PeerCPU: env.PinTo(0)}, "2", "0"},
		{rdmalat.Pair{Mode: "two-node", PeerSessions: 2}, "unpinned", "unpinned (2 other sessions on the peer)"},
	} {
		assert.Equal(t, tc.cpus, env.FormatCPUs(measuring(&tc.pair)...), "rdmabench-cpus of %+v", tc.pair)
		if tc.pair.Mode == "two-node" {
			assert.Equal(t, tc.peer, peerCPU(&tc.pair), "rdma-peer-cpu of %+v", tc.pair)
		}
	}
}
