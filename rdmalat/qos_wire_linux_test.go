//go:build linux

package rdmalat_test

import (
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

// openCapture captures on dev's netdev until the test ends.
func openCapture(t *testing.T, dev string) *rocecap.Capture {
	t.Helper()
	nd, err := rocecap.Netdev(dev)
	require.NoError(t, err)
	c, err := rocecap.Open(nd)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func drain(t *testing.T, c *rocecap.Capture) []rocecap.Packet {
	t.Helper()
	p, err := c.Drain()
	require.NoError(t, err)
	return p
}

func netdevOf(t *testing.T, dev string) string {
	t.Helper()
	nd, err := rocecap.Netdev(dev)
	require.NoError(t, err)
	return nd
}

// TestQoSOnTheWire sends round trips from one rxe device to another
// across the VM's veth with a traffic class and flow label set, captures
// the RoCE v2 packets on the first device's netdev, and checks the IP
// header of every one of them (both directions, ACKs included): the TOS
// byte over IPv4 (the best GID), the traffic class over IPv6 (GID index
// 0, link-local). rxe writes a zero IPv6 flow label whatever the address
// vector says (its IPv6 header is built with label 0), so the flow label
// and P_Key index are checked where they are kept: the queue pairs'
// attributes, read back with ibv_query_qp. rxe's address vector has no
// service level at all (ibv_query_qp reads SL 0 whatever was set), so the
// SL is proven by verbs' host test of the attributes it hands libibverbs
// (TestQPAttrRoundTrip).
func TestQoSOnTheWire(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	qos := rdmalat.QoS{TrafficClass: 26<<2 | 1, FlowLabel: 0x4d2c1, SL: 3} // DSCP 26 (AF31), ECN 01 (ECT(1))
	for _, gid := range []struct {
		name  string
		index int
		ipv6  bool
	}{{"ipv4", c.GIDIndex, false}, {"ipv6", env.GIDIndex0, true}} {
		for _, v := range []variant{{spec.Write, spec.RC, false}, {spec.Write, spec.UC, false}, {spec.Send, spec.UD, false}} {
			t.Run(gid.name+"/"+v.String(), func(t *testing.T) {
				capt := openCapture(t, c.Device)
				p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
					Endpoint: rdmalat.EndpointConfig{
						Device: c.Device, GIDIndex: gid.index, Op: v.op, Transport: v.tr,
						MaxSize: 64, Inline: c.Inline, MTU: c.MTU, QoS: qos,
					},
					PeerDevice: second, Timeout: 10 * time.Second,
				})
				require.NoError(t, err)
				t.Cleanup(func() { assert.NoError(t, p.Close()) })
				assert.Equal(t, qos, p.Local.QoS())
				if v.tr != spec.UD {
					for _, e := range []*rdmalat.Endpoint{p.Local, rdmalat.ResponderEndpoint(p)} {
						a, err := rdmalat.QueryQP(e)
						require.NoError(t, err)
						assert.Equal(t, qos.TrafficClass, a.TrafficClass)
						assert.Equal(t, qos.FlowLabel, a.FlowLabel)
						assert.Equal(t, qos.PKeyIndex, a.PKeyIndex)
						assert.True(t, a.IsGlobal)
					}
				}
				drain(t, capt) // the set-up's packets, if any
				const n = 20
				runSamples(t, p, 64, 0, n)
				pkts := drain(t, capt)
				// Each round trip is two messages, each seen on the
				// netdev once (sent or received), plus RC's ACKs.
				require.GreaterOrEqual(t, len(pkts), 2*n, "RoCE v2 packets captured on %s", netdevOf(t, c.Device))
				for i, pk := range pkts {
					require.Equal(t, gid.ipv6, pk.IPv6, "packet %d: IP version", i)
					require.Equal(t, qos.TrafficClass, pk.TrafficClass, "packet %d of %d: traffic class (DSCP %d, ECN %d)", i, len(pkts), pk.TrafficClass>>2, pk.TrafficClass&3)
				}
				t.Logf("%d RoCE v2 packets over %s, every one with TOS/traffic class %#x; IPv6 flow label on the wire %#x (rxe sends 0)",
					len(pkts), map[bool]string{false: "IPv4", true: "IPv6"}[gid.ipv6], qos.TrafficClass, pkts[0].FlowLabel)
			})
		}
	}
}

// TestQoSOnTheWireCM: with rdma_cm the traffic class (rdma_set_option
// TOS on the dialling side, the request's path on the accepting side for
// RC, the address handle on both sides for UD) is on every packet of the
// measured run; the connection manager's own exchange before it is not
// checked.
func TestQoSOnTheWireCM(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	qos := rdmalat.QoS{TrafficClass: 46 << 2} // DSCP 46 (EF)
	for _, v := range []variant{{spec.Write, spec.RC, false}, {spec.Send, spec.UD, false}} {
		t.Run(v.String(), func(t *testing.T) {
			capt := openCapture(t, c.Device)
			p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
				Endpoint: rdmalat.EndpointConfig{
					Device: c.Device, GIDIndex: c.GIDIndex, Op: v.op, Transport: v.tr, CM: true,
					MaxSize: 64, Inline: c.Inline, MTU: c.MTU, QoS: qos,
				},
				PeerDevice: second, Timeout: 10 * time.Second,
			})
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, p.Close()) })
			require.True(t, p.Local.CM())
			if v.tr == spec.RC {
				for _, e := range []*rdmalat.Endpoint{p.Local, rdmalat.ResponderEndpoint(p)} {
					a, err := rdmalat.QueryQP(e)
					require.NoError(t, err)
					assert.Equal(t, qos.TrafficClass, a.TrafficClass, "rdma_cm's path")
				}
			}
			drain(t, capt) // the connection manager's exchange
			const n = 20
			runSamples(t, p, 64, 0, n)
			pkts := drain(t, capt)
			require.GreaterOrEqual(t, len(pkts), 2*n)
			for i, pk := range pkts {
				require.Equal(t, qos.TrafficClass, pk.TrafficClass, "packet %d of %d: traffic class", i, len(pkts))
			}
			t.Logf("rdma_cm %v: %d RoCE v2 packets, every one with TOS %#x", v, len(pkts), qos.TrafficClass)
		})
	}

	// The fields rdma_cm takes from its route are refused, not ignored.
	_, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: c.Device, CM: true, MaxSize: 64, QoS: rdmalat.QoS{SL: 1}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rdma_cm takes the flow label, service level and P_Key of its route")
}
