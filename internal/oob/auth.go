package oob

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
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

// Auth is the client's answer to a Challenge: HMAC-SHA256 keyed with the
// shared token over the nonce (see AuthMAC), all zeros without a token.
// The token itself never crosses the network.
type Auth struct {
	MAC [NonceSize]byte
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

func (m Auth) appendPayload(e *encoder) { e.raw(m.MAC[:]) }

func (Auth) decodePayload(d *decoder) Message {
	var m Auth
	copy(m.MAC[:], d.take(NonceSize, "mac"))
	return m
}

// authLabel separates this use of the token from any other.
const authLabel = "rdmabench oob auth v3\x00"

// AuthMAC is the answer to nonce with token: HMAC-SHA256(token, label ||
// nonce). A fresh nonce per connection makes a recorded answer useless.
func AuthMAC(token string, nonce [NonceSize]byte) [NonceSize]byte {
	h := hmac.New(sha256.New, []byte(token))
	h.Write([]byte(authLabel))
	h.Write(nonce[:])
	var mac [NonceSize]byte
	copy(mac[:], h.Sum(nil))
	return mac
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

// checkAuth checks a client's answer in constant time.
func checkAuth(token string, c Challenge, a Auth) bool {
	if token == "" {
		return true
	}
	want := AuthMAC(token, c.Nonce)
	return hmac.Equal(want[:], a.MAC[:])
}
