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

// isIPv4 reports whether the GID is an IPv4-mapped address.
func (g GID) isIPv4() bool { return g.ip().To4() != nil }

// IsLinkLocal reports whether the GID is an IPv6 link-local address
// (fe80::/10), as the default GID of an InfiniBand or RoCE port is.
func (g GID) IsLinkLocal() bool { return g.Raw[0] == 0xfe && g.Raw[1]&0xc0 == 0x80 }

// String returns the GID as an IP address: "fe80::1" or "192.168.77.1" for
// an IPv4-mapped one.
func (g GID) String() string { return g.ip().String() }

// rank orders GIDs for BestGID; higher is better.
func (g GID) rank() int {
	switch {
	case g.IsZero():
		return 0
	case g.Type == GIDTypeRoCEv2 && g.isIPv4():
		return 6
	case g.Type == GIDTypeRoCEv2 && !g.IsLinkLocal():
		return 5
	case g.Type == GIDTypeRoCEv1 && !g.IsLinkLocal():
		return 4
	case g.Type == GIDTypeRoCEv2:
		return 3
	case g.Type == GIDTypeRoCEv1:
		return 2
	default:
		return 1
	}
}

// BestGID picks the GID to use from a table, as perftest does when no GID
// index is given: RoCE v2 over IPv4 first, then RoCE v2 with a global IPv6
// address, then RoCE v1, then link-local RoCE, then InfiniBand; the lowest
// index wins among equals. It never returns a zero GID.
func BestGID(gids []GID) (GID, error) {
	best, bestRank := GID{}, 0
	for _, g := range gids {
		r := g.rank()
		if r > bestRank || (r == bestRank && r > 0 && g.Index < best.Index) {
			best, bestRank = g, r
		}
	}
	if bestRank == 0 {
		return GID{}, errors.New("verbs: no usable GID in the table")
	}
	return best, nil
}
