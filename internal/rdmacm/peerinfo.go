package rdmacm

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/rdmabench/rdmabench/verbs"
)

// PeerInfo is what one side of a connection tells the other beyond the QP
// itself, carried in the CM's private data: the buffer the peer may RDMA
// into or read from, and for UD what a send needs to reach the QP.
type PeerInfo struct {
	// Addr, Size and RKey describe the side's registered buffer (mr.Addr(),
	// mr.Len(), mr.RKey()); zero when the peer needs none (SEND tests).
	Addr uint64
	Size uint64
	RKey uint32
	// QPN, QKey and GID are filled in by the package: the QP number, its
	// Q_Key (UD) and the GID the CM resolved for the side's address.
	QPN  uint32
	QKey uint32
	GID  [16]byte
	// Cookie is the session's secret from the other channel (rdmapeer's
	// Endpoint): a Listener whose Config.Expect is set refuses a request
	// without it.
	Cookie uint64
	// LID is the side's port LID, filled in by the package for UD on
	// InfiniBand, where the listener's address handle must name the
	// peer's LID (the CM's SIDR request does not give it). It travels
	// after the 56 bytes, which UD's private data has room for; 0 (not
	// sent) on RoCE and for RC, whose path the CM sets up itself.
	LID uint16
}

// peerInfoLen is the encoded size: it must fit the 56 bytes of private data
// an RC connect request carries through rdma_cm.
const peerInfoLen = 56

// peerInfoMagic starts the private data: "RBCM" with the version in the
// last byte, so a connection from something else is refused clearly.
var peerInfoMagic = [4]byte{'R', 'B', 'C', 2}

// rejectPrefix starts the private data of a refusal, followed by why.
const rejectPrefix = "rdmabench: "

// maxRejectLen is what an IB CM REJ carries.
const maxRejectLen = 148

func (p PeerInfo) marshal() []byte {
	b := make([]byte, peerInfoLen)
	copy(b, peerInfoMagic[:])
	binary.BigEndian.PutUint64(b[4:], p.Addr)
	binary.BigEndian.PutUint64(b[12:], p.Size)
	binary.BigEndian.PutUint32(b[20:], p.RKey)
	binary.BigEndian.PutUint32(b[24:], p.QPN)
	binary.BigEndian.PutUint32(b[28:], p.QKey)
	copy(b[32:], p.GID[:])
	binary.BigEndian.PutUint64(b[48:], p.Cookie)
	if p.LID != 0 {
		b = binary.BigEndian.AppendUint16(b, p.LID)
	}
	return b
}

// unmarshalPeerInfo decodes private data; transports may pad it with zeros.
func unmarshalPeerInfo(b []byte) (PeerInfo, error) {
	if len(b) < peerInfoLen {
		return PeerInfo{}, fmt.Errorf("private data of %d bytes, want at least %d from an rdmabench peer", len(b), peerInfoLen)
	}
	if [4]byte(b[:4]) != peerInfoMagic {
		if b[0] == 'R' && b[1] == 'B' && b[2] == 'C' {
			return PeerInfo{}, fmt.Errorf("rdmabench private data version %d, this build speaks %d: use the same rdmabench version on both sides", b[3], peerInfoMagic[3])
		}
		return PeerInfo{}, fmt.Errorf("private data %x... is not from rdmabench", b[:4])
	}
	p := PeerInfo{
		Addr: binary.BigEndian.Uint64(b[4:]),
		Size: binary.BigEndian.Uint64(b[12:]),
		RKey: binary.BigEndian.Uint32(b[20:]),
		QPN:  binary.BigEndian.Uint32(b[24:]) & 0xffffff,
		QKey: binary.BigEndian.Uint32(b[28:]),
	}
	copy(p.GID[:], b[32:48])
	p.Cookie = binary.BigEndian.Uint64(b[48:])
	if len(b) >= peerInfoLen+2 {
		p.LID = binary.BigEndian.Uint16(b[peerInfoLen:])
	}
	return p, nil
}

// udAH returns the address handle attributes a UD listener sends to its
// peer with: on InfiniBand the peer's LID routes (and, within a subnet,
// no GRH); on RoCE the GID does.
func udAH(port uint8, ib bool, peer PeerInfo, sgidIndex int) verbs.AHAttr {
	a := verbs.AHAttr{Port: port, DGID: peer.GID, SGIDIndex: sgidIndex}
	if ib {
		a.DLID = peer.LID
		a.DGID = [16]byte{} // one subnet: routed by LID, no GRH
	}
	return a
}

// rejectData is the private data of a refusal that says why.
func rejectData(why string) []byte {
	b := []byte(rejectPrefix + why)
	if len(b) > maxRejectLen {
		b = b[:maxRejectLen]
	}
	return b
}

// rejectReason returns the reason a refusal carries, or "".
func rejectReason(b []byte) string {
	if len(b) <= len(rejectPrefix) || string(b[:len(rejectPrefix)]) != rejectPrefix {
		return ""
	}
	b = b[len(rejectPrefix):]
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	return string(b)
}

// gidAddr returns a GID as an IP address (IPv4-mapped ones unmapped).
func gidAddr(g [16]byte) netip.Addr { return netip.AddrFrom16(g).Unmap() }
