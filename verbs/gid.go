package verbs

import (
	"errors"
	"fmt"
	"net"
)

// GIDType is the kind of a GID table entry (enum ibv_gid_type).
type GIDType uint8

const (
	GIDTypeIB     GIDType = 0 // InfiniBand
	GIDTypeRoCEv1 GIDType = 1 // RoCE v1: Ethernet, no IP header
	GIDTypeRoCEv2 GIDType = 2 // RoCE v2: UDP/IP, routable
)

func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return fmt.Sprintf("GIDType(%d)", uint8(t))
}

// GID is one entry of a port's GID table.
type GID struct {
	Index int      // the entry's index in the table (the sgid index of this side)
	Raw   [16]byte // the GID in network byte order
	Type  GIDType
	// IfIndex is the index of the network device the entry comes from
	// (RoCE: the netdev carrying the address; InfiniBand: 0), as
	// ibv_query_gid_table reports it; 0 when unknown.
	IfIndex int
}

// ip returns the GID as a 16-byte IP address. For RoCE it is the address of
// the network device the GID comes from (an IPv4 address appears
// IPv4-mapped, ::ffff:a.b.c.d).
func (g GID) ip() net.IP {
	ip := make(net.IP, 16)
	copy(ip, g.Raw[:])
	return ip
}

// IsZero reports whether the GID is all zeros (an empty table entry).
func (g GID) IsZero() bool { return g.Raw == [16]byte{} }

func (g GID) isIPv4() bool { return g.IsIPv4() }

// IsIPv4 reports whether the GID carries an IPv4 address (IPv4-mapped
// ::ffff:a.b.c.d, or its multicast form ff0e::ffff:a.b.c.d), as perftest
// tells the two address families apart.
func (g GID) IsIPv4() bool {
	head, mid := [8]byte(g.Raw[0:8]), [4]byte(g.Raw[8:12])
	return mid == [4]byte{0, 0, 0xff, 0xff} && (head == [8]byte{} || head == [8]byte{0xff, 0x0e})
}

// Family returns "IPv4" or "IPv6", the GID's address family, for messages.
func (g GID) Family() string {
	if g.IsIPv4() {
		return "IPv4"
	}
	return "IPv6"
}

// IsLinkLocal reports whether the GID's address is link-local: fe80::/10,
// as the default GID of an InfiniBand or RoCE port is, or an IPv4
// link-local address 169.254/16 (RFC 3927, which a host gets when DHCP
// found no server).
func (g GID) IsLinkLocal() bool {
	if g.isIPv4() {
		return g.Raw[12] == 169 && g.Raw[13] == 254
	}
	return g.Raw[0] == 0xfe && g.Raw[1]&0xc0 == 0x80
}

// String returns the GID as an IP address: "fe80::1" or "192.168.77.1" for
// an IPv4-mapped one.
func (g GID) String() string { return g.ip().String() }

// The weights of score: each exceeds everything below it put together.
const (
	scoreIPv4   = 100 // the address family perftest prefers by default
	scoreGlobal = 10  // not link-local
)

// score rates a GID table entry as perftest's automatic GID choice does (no
// -x): an IPv4 address first, then one that is not link-local, then the
// RoCE version (v2 over v1 over InfiniBand). -1 for an empty entry.
func (g GID) score() int {
	if g.IsZero() {
		return -1
	}
	s := 0
	if g.isIPv4() {
		s += scoreIPv4
	}
	if !g.IsLinkLocal() {
		s += scoreGlobal
	}
	switch g.Type {
	case GIDTypeRoCEv2:
		s += 2
	case GIDTypeRoCEv1:
		s += 1
	}
	return s
}

// BestGID picks the GID to use from a table, as perftest does when no GID
// index is given: the highest score (so RoCE v2 over IPv4 first, a
// link-local 169.254/16 address after a routable one of the same family),
// the lowest index among equals. It never returns an empty entry.
func BestGID(gids []GID) (GID, error) {
	best, bestScore := GID{}, -1
	for _, g := range gids {
		s := g.score()
		if s > bestScore || (s == bestScore && s >= 0 && g.Index < best.Index) {
			best, bestScore = g, s
		}
	}
	if bestScore < 0 {
		return GID{}, errors.New("verbs: no usable GID in the table")
	}
	return best, nil
}
