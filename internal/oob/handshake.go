package oob

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// VersionError reports a protocol version mismatch. It matches ErrVersion.
type VersionError struct {
	Local, Peer uint16
	Server      bool // this side is the rdmapeer
}

func (e *VersionError) Error() string {
	// Say which side to upgrade: the older one.
	if e.Server {
		upgrade := "upgrade the client (rdmabench) to this rdmapeer's version"
		if e.Peer > e.Local {
			upgrade = "upgrade this rdmapeer to the client's rdmabench version"
		}
		return fmt.Sprintf("oob: client speaks oob version %d, this rdmapeer %d: %s", e.Peer, e.Local, upgrade)
	}
	upgrade := "upgrade rdmapeer on the peer's node to this client's rdmabench version"
	if e.Peer > e.Local {
		upgrade = "upgrade this client (rdmabench) to the peer's rdmapeer version"
	}
	return fmt.Sprintf("oob: peer speaks oob version %d, this client %d: %s", e.Peer, e.Local, upgrade)
}

func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// NotPeerError reports that the other side does not speak this protocol.
// It matches ErrNotPeer and unwraps to the underlying failure.
type NotPeerError struct {
	Addr string // the other side's address
	What string // what it should have been: "an rdmapeer", "an rdmabench client"
	Got  string // what came instead, e.g. `"HTTP/1.1 400 Bad Request"`
	Err  error
}

func (e *NotPeerError) Error() string {
	return fmt.Sprintf("%s is not %s (got %s)", e.Addr, e.What, e.Got)
}

func (e *NotPeerError) Is(target error) bool { return target == ErrNotPeer }
func (e *NotPeerError) Unwrap() error        { return e.Err }

// Handshake is the client's side of the handshake: send Hello, receive the
// peer's. It returns the peer's Hello. A version mismatch is a
// *VersionError; anything that is not an rdmabench Hello within Timeout
// (silence, an HTTP answer, garbage, a closed connection) is a
// *NotPeerError.
func (c *Conn) Handshake() (Hello, error) {
	local := c.local()
	if err := c.SendHello(local); err != nil {
		return Hello{}, err
	}
	m, err := c.recvHandshake("an rdmapeer")
	if err != nil {
		return Hello{}, err
	}
	switch m := m.(type) {
	case Hello:
		c.peer = m
		if m.Version != local.Version {
			return m, &VersionError{Local: local.Version, Peer: m.Version}
		}
		return m, c.answerChallenge()
	case Error:
		return Hello{}, fmt.Errorf("oob: %s refused the handshake: %w", c.who(), &m)
	default:
		return Hello{}, fmt.Errorf("%w: expected Hello from %s, got %v", ErrProtocol, c.who(), m.Type())
	}
}

// answerChallenge receives the peer's Challenge and answers it with
// c.Token's MAC.
func (c *Conn) answerChallenge() error {
	m, err := c.expect(TypeChallenge, c.timeout())
	if err != nil {
		var perr *Error
		if errors.As(err, &perr) {
			return fmt.Errorf("oob: %s refused the handshake: %w", c.who(), err)
		}
		return err
	}
	ch := m.(Challenge)
	if ch.Flags&ChallengeToken != 0 && c.Token == "" {
		return fmt.Errorf("%w: rdmapeer at %s requires a token: set RDMABENCH_PEER_TOKEN to the value of its -token", ErrAuth, c.nc.RemoteAddr())
	}
	// The MAC only for a peer that asks for one, and bound to the address
	// this client reached: an answer relayed elsewhere is refused there.
	a := Auth{Addr: SessionAddr(c.nc.RemoteAddr())}
	if ch.Flags&ChallengeToken != 0 {
		a.MAC = AuthMAC(c.Token, ch.Nonce, a.Addr)
	}
	return c.Send(a)
}

// AcceptHandshake is rdmapeer's side of the handshake: receive the client's
// Hello, answer with its own (also on a version mismatch, so that the client
// can name both versions), then compare versions. A client that sends
// something else is answered with an Error and gets a *NotPeerError.
func (c *Conn) AcceptHandshake() (Hello, error) {
	local := c.local()
	m, err := c.recvHandshake("an rdmabench client")
	if err != nil {
		if errors.Is(err, ErrNotPeer) {
			_ = c.SendError(CodeProtocol, fmt.Sprintf("this is rdmapeer (oob version %d): it speaks only the rdmabench out-of-band protocol", local.Version)) // best effort: the client does not speak it
		}
		return Hello{}, err
	}
	switch m := m.(type) {
	case Hello:
		c.peer = m
		if err := c.SendHello(local); err != nil {
			return m, err
		}
		if m.Version != local.Version {
			return m, &VersionError{Local: local.Version, Peer: m.Version, Server: true}
		}
		return m, c.challenge()
	case Error:
		return Hello{}, &m
	default:
		err := fmt.Errorf("%w: expected Hello from %s, got %v", ErrProtocol, c.who(), m.Type())
		_ = c.SendError(CodeProtocol, err.Error()) // best effort: we close anyway
		return Hello{}, err
	}
}

// challenge sends a fresh Challenge and checks the client's Auth against
// c.Token.
func (c *Conn) challenge() error {
	ch, err := newChallenge(c.Token)
	if err != nil {
		return err
	}
	if err := c.Send(ch); err != nil {
		return err
	}
	m, err := c.expect(TypeAuth, c.timeout())
	if err != nil {
		return err
	}
	a := m.(Auth)
	local := SessionAddr(c.nc.LocalAddr())
	ok, relayed := checkAuth(c.Token, ch, a, local)
	switch {
	case relayed:
		_ = c.SendError(CodeAuth, fmt.Sprintf("rdmapeer at %s: the client's answer was made for %q, another address: relayed by another host, or sent through address translation; connect to this rdmapeer directly", local, a.Addr)) // best effort: we close anyway
		return fmt.Errorf("%w: client %s answered for %q, not this rdmapeer's %s: relayed, or through address translation", ErrAuth, c.nc.RemoteAddr(), a.Addr, local)
	case !ok:
		what := "wrong token"
		if a.MAC == ([NonceSize]byte{}) {
			what = "no token"
		}
		_ = c.SendError(CodeAuth, "rdmapeer requires a token and the client's is wrong: set RDMABENCH_PEER_TOKEN to the value of its -token") // best effort: we close anyway
		return fmt.Errorf("%w: %s from client %s", ErrAuth, what, c.nc.RemoteAddr())
	}
	return nil
}

// recvHandshake receives the first message, telling a peer that does not
// speak the protocol from one that fails while speaking it.
func (c *Conn) recvHandshake(what string) (Message, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	d := c.timeout()
	if err := c.nc.SetReadDeadline(c.deadline(d)); err != nil {
		return nil, fmt.Errorf("oob: handshake with %s: %w", c.who(), err)
	}
	frame, err := c.readFrame()
	if err == nil {
		m, err := Decode(frame)
		if err != nil {
			c.rerr = err
			return nil, c.notPeer(what, quote(frame), err)
		}
		return m, nil
	}
	switch {
	case errors.Is(err, ErrMalformed):
		return nil, c.notPeer(what, quote(c.snippet()), err)
	case errors.Is(err, io.EOF):
		return nil, c.notPeer(what, "the connection closed with no answer", err)
	case errors.Is(err, syscall.ECONNRESET) && c.rn == 0:
		return nil, c.notPeer(what, "the connection reset with no answer", err)
	case errors.Is(err, os.ErrDeadlineExceeded) && c.rn == 0:
		return nil, c.notPeer(what, fmt.Sprintf("no answer within %v", d), err)
	}
	return nil, c.recvErr(err, "Hello", d)
}

func (c *Conn) notPeer(what, got string, err error) error {
	addr := "peer"
	if a := c.nc.RemoteAddr(); a != nil {
		addr = a.String()
	}
	return &NotPeerError{Addr: addr, What: what, Got: got, Err: err}
}

// snippet returns the bytes of a rejected frame plus whatever else arrives
// within 50 ms, up to 64 bytes, to show in an error.
func (c *Conn) snippet() []byte {
	const max = 64
	b := append([]byte(nil), c.rbuf[:min(c.rn, max)]...)
	if len(b) < max && c.nc.SetReadDeadline(c.deadline(50*time.Millisecond)) == nil {
		more := make([]byte, max-len(b))
		n, _ := io.ReadFull(c.nc, more) // best effort: only for the message
		b = append(b, more[:n]...)
	}
	return b
}

func quote(b []byte) string {
	const max = 64
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
