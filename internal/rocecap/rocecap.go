//go:build linux

// Package rocecap captures RoCE v2 packets on a network interface with a
// raw AF_PACKET socket and reads what their IP header says (the traffic
// class and the IPv6 flow label), for tests that check a run's QoS on the
// wire in the soft-RoCE VM, where no tcpdump is needed. Opening a capture
// needs CAP_NET_RAW (the VM runs tests as root).
package rocecap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// UDPPort is RoCE v2's UDP destination port.
const UDPPort = 4791

// A Packet is what one captured RoCE v2 packet's IP header says.
type Packet struct {
	IPv6         bool
	TrafficClass uint8  // the IPv4 TOS byte or the IPv6 traffic class
	FlowLabel    uint32 // IPv6 only
}

// Parse reads an Ethernet frame; ok is false for anything but a UDP
// datagram to port 4791 over IPv4 or IPv6 (untagged: the VM's veth has
// no VLAN).
func Parse(frame []byte) (p Packet, ok bool) {
	if len(frame) < 14 {
		return p, false
	}
	ip := frame[14:]
	switch binary.BigEndian.Uint16(frame[12:]) {
	case unix.ETH_P_IP:
		if len(ip) < 20 || ip[0]>>4 != 4 || ip[9] != unix.IPPROTO_UDP {
			return p, false
		}
		ihl := int(ip[0]&0xf) * 4
		if ihl < 20 || len(ip) < ihl+4 || binary.BigEndian.Uint16(ip[ihl+2:]) != UDPPort {
			return p, false
		}
		return Packet{TrafficClass: ip[1]}, true
	case unix.ETH_P_IPV6:
		if len(ip) < 44 || ip[0]>>4 != 6 || ip[6] != unix.IPPROTO_UDP || binary.BigEndian.Uint16(ip[42:]) != UDPPort {
			return p, false
		}
		w := binary.BigEndian.Uint32(ip)
		return Packet{IPv6: true, TrafficClass: uint8(w >> 20), FlowLabel: w & 0xfffff}, true
	}
	return p, false
}

// A Capture queues every frame sent or received on one interface until
// drained.
type Capture struct{ fd int }

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Open starts capturing on the interface ifname.
func Open(ifname string) (*Capture, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("rocecap: %w", err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("rocecap: raw socket (needs CAP_NET_RAW): %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("rocecap: SO_RCVBUF: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("rocecap: bind to %s: %w", ifname, err)
	}
	return &Capture{fd: fd}, nil
}

// Drain returns the RoCE v2 packets queued so far, without waiting.
func (c *Capture) Drain() ([]Packet, error) {
	var out []Packet
	buf := make([]byte, 65536)
	for {
		n, _, err := unix.Recvfrom(c.fd, buf, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("rocecap: %w", err)
		}
		if p, ok := Parse(buf[:n]); ok {
			out = append(out, p)
		}
	}
}

// Close stops the capture. Idempotent.
func (c *Capture) Close() error {
	if c == nil || c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	return err
}

// Netdev is the network device under an RDMA device's port 1 (rxe0:
// veth0), from its GID table's first entry.
func Netdev(dev string) (string, error) {
	b, err := os.ReadFile("/sys/class/infiniband/" + dev + "/ports/1/gid_attrs/ndevs/0")
	if err != nil {
		return "", fmt.Errorf("rocecap: %s has no network device (not RoCE?): %w", dev, err)
	}
	return strings.TrimSpace(string(b)), nil
}
