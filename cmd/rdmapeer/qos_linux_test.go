package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/rocecap"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestTwoNodeQoS: the client sends its traffic class (and the rest of its
// QoS) in the session's parameters and rdmapeer applies it: every RoCE v2
// packet captured on the client's netdev, the peer's writes and ACKs
// included, carries the class, over RC and UD. The config lines record it.
func TestTwoNodeQoS(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev)
	nd, err := rocecap.Netdev(dev)
	require.NoError(t, err)
	qos := rdmalat.QoS{TrafficClass: 34<<2 | 2, FlowLabel: 77} // DSCP 34 (AF41), ECN 10 (ECT(0))
	for _, tr := range []spec.Transport{spec.RC, spec.UD} {
		t.Run(tr.String(), func(t *testing.T) {
			op := spec.Write
			if tr == spec.UD {
				op = spec.Send
			}
			capt, err := rocecap.Open(nd)
			require.NoError(t, err)
			defer capt.Close()
			p, err := rdmalat.DialPeer(t.Context(), pp.addr, rdmalat.RemoteConfig{
				Endpoint: rdmalat.EndpointConfig{Device: dev, GIDIndex: -1, Op: op, Transport: tr, MaxSize: 64, Inline: -1, QoS: qos},
				Timeout:  10 * time.Second,
			})
			require.NoError(t, err)
			defer p.Close()
			_, err = capt.Drain()
			require.NoError(t, err)
			runRoundTrips(t, p, 64, 0, 30)
			pkts, err := capt.Drain()
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(pkts), 60, "both sides' messages on %s", nd)
			for i, pk := range pkts {
				require.Equal(t, qos.TrafficClass, pk.TrafficClass, "packet %d of %d", i, len(pkts))
			}
			cfg := strings.Join(testenv.ConfigLines(p, env.Config{}), "\n") + "\n"
			assert.Contains(t, cfg, "rdma-tclass: 138\n")
			assert.Contains(t, cfg, "rdma-flow-label: 77\n")
			assert.NotContains(t, cfg, "rdma-sl:", "unset fields print nothing")
		})
	}
}
