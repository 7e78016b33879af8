package oob

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net"
	"net/netip"
)

// NonceSize is the length of a Challenge's nonce and of an Auth's MAC.
const NonceSize = 32

// Challenge follows the peer's Hello: a fresh random nonce, and whether
// the peer requires a token (rdmapeer -token). The client answers with
// Auth whatever the flags say, so that the sequence is the same for all.
type Challenge struct {
	Nonce [NonceSize]byte
	Flags ChallengeFlags
}

// ChallengeFlags say what a peer requires of the client.
type ChallengeFlags uint8

// ChallengeToken: the peer checks Auth.MAC against its token.
const ChallengeToken ChallengeFlags = 1 << 0

// Auth is the client's answer to a Challenge. MAC is HMAC-SHA256 keyed
// with the shared token over the nonce and Addr (see AuthMAC), all zeros
// when the Challenge asks for no token; the token itself never crosses the
// network. Addr is the address the client is connected to, as it sees it
// (SessionAddr): the peer refuses an answer made for another address, so
// that a fake peer cannot relay a client's answer to the real one.
type Auth struct {
	MAC  [NonceSize]byte
	Addr string
}

func (Challenge) Type() Type { return TypeChallenge }
func (Auth) Type() Type      { return TypeAuth }

func (m Challenge) appendPayload(e *encoder) {
	e.raw(m.Nonce[:])
	e.u8(uint8(m.Flags))
}

func (Challenge) decodePayload(d *decoder) Message {
	var m Challenge
	copy(m.Nonce[:], d.take(NonceSize, "nonce"))
	m.Flags = ChallengeFlags(d.u8("flags"))
	return m
}

func (m Auth) appendPayload(e *encoder) {
	e.raw(m.MAC[:])
	e.str("addr", m.Addr)
}

func (Auth) decodePayload(d *decoder) Message {
	var m Auth
	copy(m.MAC[:], d.take(NonceSize, "mac"))
	m.Addr = d.str("addr")
	return m
}

// authLabel separates this use of the token from any other, and this
// version's MAC from version 3's (which bound the nonce alone).
const authLabel = "rdmabench oob auth v4\x00"

// AuthMAC is the answer to nonce with token for a client connected to
// addr: HMAC-SHA256(token, label || nonce || addr). A fresh nonce per
// connection makes a recorded answer useless; addr makes an answer given
// to one peer useless at another.
func AuthMAC(token string, nonce [NonceSize]byte, addr string) [NonceSize]byte {
	h := hmac.New(sha256.New, []byte(token))
	h.Write([]byte(authLabel))
	h.Write(nonce[:])
	h.Write([]byte(addr))
	var mac [NonceSize]byte
	copy(mac[:], h.Sum(nil))
	return mac
}

// SessionAddr is how both ends name the address of the peer's end of a
// connection in Auth: ip:port, an IPv4-mapped address unmapped, with no
// IPv6 zone (each end names its own interface); a non-IP address as its
// String.
func SessionAddr(a net.Addr) string {
	if a == nil {
		return ""
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port()).String()
}

// newChallenge draws a nonce from the system's random source.
func newChallenge(token string) (Challenge, error) {
	var c Challenge
	if _, err := rand.Read(c.Nonce[:]); err != nil {
		return c, fmt.Errorf("oob: drawing a nonce: %w", err)
	}
	if token != "" {
		c.Flags |= ChallengeToken
	}
	return c, nil
}

// checkAuth checks a client's answer in constant time: its MAC for the
// address it names, then that address against local, this end's.
func checkAuth(token string, c Challenge, a Auth, local string) (ok, relayed bool) {
	if token == "" {
		return true, false
	}
	want := AuthMAC(token, c.Nonce, a.Addr)
	if !hmac.Equal(want[:], a.MAC[:]) {
		return false, false
	}
	return a.Addr == local, a.Addr != local
}
