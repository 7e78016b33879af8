//go:build linux

package rdmalat_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// roceV2Port is RoCE v2's UDP destination port.
const roceV2Port = 4791

// rocePacket is what a captured RoCE v2 packet's IP header says.
type rocePacket struct {
	ipv6         bool
	trafficClass uint8  // IPv4 TOS, IPv6 traffic class
	flowLabel    uint32 // IPv6 only
}

// parseRoCE reads an Ethernet frame; ok is false for anything but a UDP
// datagram to port 4791 over IPv4 or IPv6 (no VLAN: the VM's veth has none).
func parseRoCE(frame []byte) (rocePacket, bool) {
	if len(frame) < 14 {
		return rocePacket{}, false
	}
	ip := frame[14:]
	switch binary.BigEndian.Uint16(frame[12:]) {
	case unix.ETH_P_IP:
		if len(ip) < 20 || ip[0]>>4 != 4 || ip[9] != unix.IPPROTO_UDP {
			return rocePacket{}, false
		}
		ihl := int(ip[0]&0xf) * 4
		if len(ip) < ihl+4 || binary.BigEndian.Uint16(ip[ihl+2:]) != roceV2Port {
			return rocePacket{}, false
		}
		return rocePacket{trafficClass: ip[1]}, true
	case unix.ETH_P_IPV6:
		if len(ip) < 44 || ip[0]>>4 != 6 || ip[6] != unix.IPPROTO_UDP || binary.BigEndian.Uint16(ip[42:]) != roceV2Port {
			return rocePacket{}, false
		}
		w := binary.BigEndian.Uint32(ip)
		return rocePacket{ipv6: true, trafficClass: uint8(w >> 20), flowLabel: w & 0xfffff}, true
	}
	return rocePacket{}, false
}

func TestParseRoCE(t *testing.T) {
	eth := func(typ uint16) []byte {
		b := make([]byte, 14)
		binary.BigEndian.PutUint16(b[12:], typ)
		return b
	}
	v4 := append(eth(unix.ETH_P_IP), 0x45, 0x68, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0xc0, 0, 0x12, 0xb7)
	p, ok := parseRoCE(v4)
	require.True(t, ok)
	assert.Equal(t, rocePacket{trafficClass: 0x68}, p)
	v4[len(v4)-1] = 0xb8 // port 4792
	_, ok = parseRoCE(v4)
	assert.False(t, ok)

	// version 6, traffic class 0x68, flow label 0x4d2c1: 0110 0110 1000 0100 1101 0010 1100 0001
	v6 := append(eth(unix.ETH_P_IPV6), 0x66, 0x84, 0xd2, 0xc1, 0, 8, 17, 64)
	v6 = append(v6, make([]byte, 32)...)
	v6 = append(v6, 0xc0, 0, 0x12, 0xb7)
	p, ok = parseRoCE(v6)
	require.True(t, ok)
	assert.Equal(t, rocePacket{ipv6: true, trafficClass: 0x68, flowLabel: 0x4d2c1}, p)
	_, ok = parseRoCE(v6[:40])
	assert.False(t, ok, "truncated")
	_, ok = parseRoCE(eth(unix.ETH_P_ARP))
	assert.False(t, ok)
}

// capture is a raw AF_PACKET socket on one interface: every frame sent
// or received there queues in it until drained.
type capture struct{ fd int }

func openCapture(t *testing.T, ifname string) *capture {
	t.Helper()
	ifi, err := netInterfaceIndex(ifname)
	require.NoError(t, err)
	proto := int(htons(unix.ETH_P_ALL))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	require.NoError(t, err, "a raw socket needs root (the VM runs tests as root)")
	t.Cleanup(func() { unix.Close(fd) })
	require.NoError(t, unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20))
	require.NoError(t, unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi}))
	return &capture{fd: fd}
}

// drain returns the RoCE v2 packets queued so far.
func (c *capture) drain(t *testing.T) []rocePacket {
	t.Helper()
	var out []rocePacket
	buf := make([]byte, 65536)
	for {
		n, _, err := unix.Recvfrom(c.fd, buf, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		require.NoError(t, err)
		if p, ok := parseRoCE(buf[:n]); ok {
			out = append(out, p)
		}
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func netInterfaceIndex(name string) (int, error) {
	b, err := os.ReadFile("/sys/class/net/" + name + "/ifindex")
	if err != nil {
		return 0, err
	}
	var i int
	_, err = fmt.Sscan(strings.TrimSpace(string(b)), &i)
	return i, err
}

// netdevOf is the network device under an RDMA device's port 1 (rxe0:
// veth0), from its GID table's first entry.
func netdevOf(t *testing.T, dev string) string {
	t.Helper()
	b, err := os.ReadFile("/sys/class/infiniband/" + dev + "/ports/1/gid_attrs/ndevs/0")
	require.NoError(t, err, "%s has no network device: not RoCE", dev)
	return strings.TrimSpace(string(b))
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
				capt := openCapture(t, netdevOf(t, c.Device))
				p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
					Endpoint: rdmalat.EndpointConfig{
						Device: c.Device, GIDIndex: gid.index, Op: v.op, Transport: v.tr,
						MaxSize: 64, Inline: c.Inline, MTU: c.MTU, QoS: qos,
					},
					PeerDevice: second, CPUs: [2]int{rdmalat.NoCPU, rdmalat.NoCPU}, Timeout: 10 * time.Second,
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
				capt.drain(t) // the set-up's packets, if any
				const n = 20
				runSamples(t, p, 64, 0, n)
				pkts := capt.drain(t)
				// Each round trip is two messages, each seen on the
				// netdev once (sent or received), plus RC's ACKs.
				require.GreaterOrEqual(t, len(pkts), 2*n, "RoCE v2 packets captured on %s", netdevOf(t, c.Device))
				for i, pk := range pkts {
					require.Equal(t, gid.ipv6, pk.ipv6, "packet %d: IP version", i)
					require.Equal(t, qos.TrafficClass, pk.trafficClass, "packet %d of %d: traffic class (DSCP %d, ECN %d)", i, len(pkts), pk.trafficClass>>2, pk.trafficClass&3)
				}
				t.Logf("%d RoCE v2 packets over %s, every one with TOS/traffic class %#x; IPv6 flow label on the wire %#x (rxe sends 0)",
					len(pkts), map[bool]string{false: "IPv4", true: "IPv6"}[gid.ipv6], qos.TrafficClass, pkts[0].flowLabel)
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
			capt := openCapture(t, netdevOf(t, c.Device))
			p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
				Endpoint: rdmalat.EndpointConfig{
					Device: c.Device, GIDIndex: c.GIDIndex, Op: v.op, Transport: v.tr, CM: true,
					MaxSize: 64, Inline: c.Inline, MTU: c.MTU, QoS: qos,
				},
				PeerDevice: second, CPUs: [2]int{rdmalat.NoCPU, rdmalat.NoCPU}, Timeout: 10 * time.Second,
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
			capt.drain(t) // the connection manager's exchange
			const n = 20
			runSamples(t, p, 64, 0, n)
			pkts := capt.drain(t)
			require.GreaterOrEqual(t, len(pkts), 2*n)
			for i, pk := range pkts {
				require.Equal(t, qos.TrafficClass, pk.trafficClass, "packet %d of %d: traffic class", i, len(pkts))
			}
			t.Logf("rdma_cm %v: %d RoCE v2 packets, every one with TOS %#x", v, len(pkts), qos.TrafficClass)
		})
	}

	// The fields rdma_cm takes from its route are refused, not ignored.
	_, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: c.Device, CM: true, MaxSize: 64, QoS: rdmalat.QoS{SL: 1}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rdma_cm takes the flow label, service level and P_Key of its route")
}
