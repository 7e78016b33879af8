package oob

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTimeout bounds each send and each receive of a Conn whose Timeout
// is 0 (qperf uses the same 5 s).
const DefaultTimeout = 5 * time.Second

// KeepAlive is the TCP keep-alive that Dial and Accept set: a peer host that
// vanishes without closing its socket (power loss, cable) is noticed after
// about Idle + Interval*Count = 8 s, even inside a Watch.
var KeepAlive = net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: time.Second, Count: 3}

// DefaultSoftware returns the Software string a Conn sends in its Hello
// when Conn.Local is zero: "rdmabench <module version> <Go version>".
func DefaultSoftware() string { return defaultSoftware() }

var defaultSoftware = sync.OnceValue(func() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		const path = "github.com/rdmabench/rdmabench"
		if bi.Main.Path == path && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == path {
				v = d.Version
			}
		}
	}
	return "rdmabench " + v + " " + runtime.Version()
})

// A long-past deadline, to unblock a read at once.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is one side of an out-of-band connection. Every Send and Recv sets a
// deadline Timeout ahead of it, so none blocks longer. Sends may come from
// any goroutine; receives must come from one at a time.
type Conn struct {
	// Timeout bounds each send and each receive; 0 means DefaultTimeout.
	Timeout time.Duration
	// Local is the Hello this side sends; zero means
	// Hello{Version, DefaultSoftware()}.
	Local Hello
	// Token is the shared secret (rdmapeer -token, RDMABENCH_PEER_TOKEN):
	// a server with one requires every client to prove it knows it; a
	// client answers the server's challenge with it. Empty: none.
	Token string
	// Deadline, if not zero, is a bound no send or receive waits past,
	// whatever Timeout says: the one deadline of a whole handshake
	// (AcceptBy). Set and clear it from the receiving goroutine, before
	// other goroutines send.
	Deadline time.Time

	nc     net.Conn
	closed atomic.Bool

	wmu  sync.Mutex
	wbuf []byte

	rmu     sync.Mutex
	rbuf    [HeaderSize + MaxPayload]byte
	rn      int     // bytes of the frame being read, kept across a deadline
	rerr    error   // sticky: the byte stream is out of step
	pending Message // read by a Watcher, returned by the next receive
	watcher *Watcher
	peer    Hello
}

// NewConn wraps nc. It does no handshake: see Handshake and AcceptHandshake,
// or use Dial and Accept.
func NewConn(nc net.Conn) *Conn { return &Conn{nc: nc} }

// NetConn returns the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Peer returns the Hello the other side sent in the handshake.
func (c *Conn) Peer() Hello { return c.peer }

// Close closes the connection. It is idempotent and nil-safe. A Watcher
// still running ends without reporting a failure.
func (c *Conn) Close() error {
	if c == nil || !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	return c.nc.Close() // unblocks a receive in progress, or a Watcher's read

}

func (c *Conn) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// deadline is the time a wait of d (none if d <= 0) starting now must
// end by: d ahead, and never past c.Deadline.
func (c *Conn) deadline(d time.Duration) time.Time {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	if !c.Deadline.IsZero() && (t.IsZero() || c.Deadline.Before(t)) {
		t = c.Deadline
	}
	return t
}

func (c *Conn) local() Hello {
	if c.Local == (Hello{}) {
		return Hello{Version: Version, Software: DefaultSoftware()}
	}
	return c.Local
}

// who names the other side in error messages.
func (c *Conn) who() string {
	if a := c.nc.RemoteAddr(); a != nil {
		return "peer " + a.String()
	}
	return "peer"
}

// Dial connects to the rdmapeer at addr (host:port, see ParseAddr) and does
// the client handshake. timeout bounds the connect and becomes the Conn's
// Timeout (0: DefaultTimeout). Cancelling ctx aborts the dial or the
// handshake.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*Conn, error) {
	return DialToken(ctx, addr, timeout, "")
}

// DialToken is Dial with a token for a peer that requires one (see
// Conn.Token).
func DialToken(ctx context.Context, addr string, timeout time.Duration, token string) (*Conn, error) {
	addr, err := ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	d := net.Dialer{Timeout: timeout, KeepAliveConfig: KeepAlive}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		// The net error names the address again ("dial tcp ADDR: "): keep
		// only its cause, still wrapped for errors.Is.
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil && ctx.Err() == nil {
			err = oe.Err
		}
		return nil, fmt.Errorf("cannot reach rdmapeer at %s (is it running there?): %w", addr, err)
	}
	c := NewConn(nc)
	c.Timeout = timeout
	c.Token = token
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	_, err = c.Handshake()
	if !stop() {
		c.Close()
		return nil, fmt.Errorf("oob: handshake with %s: %w", addr, context.Cause(ctx))
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Accept does the server handshake on a connection a listener accepted,
// with timeout as the Conn's Timeout (0: DefaultTimeout). On failure it
// closes nc.
func Accept(nc net.Conn, timeout time.Duration) (*Conn, error) {
	return AcceptToken(nc, timeout, "")
}

// AcceptToken is Accept for a server that requires token (see
// Conn.Token); a client that does not prove it knows token is answered
// with an Error of CodeAuth and gets an error matching ErrAuth.
// timeout bounds the handshake as a whole (see AcceptWithin), then each
// send and receive.
func AcceptToken(nc net.Conn, timeout time.Duration, token string) (*Conn, error) {
	c, err := AcceptWithin(nc, timeout, token)
	if err != nil {
		return nil, err
	}
	c.Deadline = time.Time{}
	return c, nil
}

// AcceptWithin does the server handshake on nc for a server that requires
// token (none if empty), all of it within timeout of now (0:
// DefaultTimeout): one deadline, not one per message, so that a client
// sending each message just within a bound is still dropped. The returned
// Conn keeps that deadline as its Deadline, so that what the caller
// receives next (rdmapeer's first Params) is bounded by it too; clear
// Conn.Deadline to lift it. On failure it closes nc.
func AcceptWithin(nc net.Conn, timeout time.Duration, token string) (*Conn, error) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetKeepAliveConfig(KeepAlive) // best effort: only slows the detection of a vanished host
	}
	c := NewConn(nc)
	c.Timeout = timeout
	c.Deadline = time.Now().Add(c.timeout())
	c.Token = token
	if _, err := c.AcceptHandshake(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// readFrame reads one whole frame into c.rbuf. A deadline may interrupt it
// anywhere: the bytes read so far are kept and the next call goes on from
// there. The header is checked byte by byte as it arrives. The returned
// slice is valid until the next read.
func (c *Conn) readFrame() ([]byte, error) {
	if c.rerr != nil {
		return nil, c.rerr
	}
	for {
		need := HeaderSize
		if c.rn >= HeaderSize {
			need += int(binary.BigEndian.Uint16(c.rbuf[2:HeaderSize]))
		}
		if c.rn == need {
			c.rn = 0
			return c.rbuf[:need], nil
		}
		k, err := c.nc.Read(c.rbuf[c.rn:need])
		if k > 0 {
			before := c.rn
			c.rn += k
			if before < HeaderSize {
				if herr := checkHeaderPrefix(c.rbuf[:min(c.rn, HeaderSize)]); herr != nil {
					c.rerr = herr
					return nil, herr
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && c.rn > 0 {
				err = fmt.Errorf("oob: %s closed the connection in the middle of a %v message (got %d of %d bytes): %w",
					c.who(), Type(c.rbuf[0]), c.rn, need, io.ErrUnexpectedEOF)
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				c.rerr = err
			}
			return nil, err
		}
	}
}

// recv receives one message with a deadline d ahead (none if d <= 0).
func (c *Conn) recv(d time.Duration) (Message, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.watcher != nil {
		return nil, fmt.Errorf("%w: receive while a Watcher is active (call its Stop first)", ErrProtocol)
	}
	if m := c.pending; m != nil {
		c.pending = nil
		return m, nil
	}
	if err := c.nc.SetReadDeadline(c.deadline(d)); err != nil {
		return nil, err
	}
	frame, err := c.readFrame()
	if err != nil {
		return nil, err
	}
	m, err := Decode(frame)
	if err != nil {
		c.rerr = err
		return nil, err
	}
	return m, nil
}

// recvErr puts a receive failure in words.
func (c *Conn) recvErr(err error, want string, d time.Duration) error {
	switch {
	case errors.Is(err, ErrMalformed), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, ErrProtocol):
		return err // already says it all
	case errors.Is(err, io.EOF):
		return fmt.Errorf("oob: %s closed the connection while we waited for %s: %w", c.who(), want, err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("oob: no %s from %s within %v: %w", want, c.who(), d, err)
	}
	return fmt.Errorf("oob: waiting for %s from %s: %w", want, c.who(), err)
}

// expect receives a message of type want within d. An Error from the peer
// is returned as an *Error.
func (c *Conn) expect(want Type, d time.Duration) (Message, error) {
	m, err := c.recv(d)
	if err != nil {
		return nil, c.recvErr(err, want.String(), d)
	}
	if e, ok := m.(Error); ok {
		return nil, &e
	}
	if m.Type() != want {
		return nil, fmt.Errorf("%w: expected %v from %s, got %v", ErrProtocol, want, c.who(), m.Type())
	}
	return m, nil
}

// Recv receives the next message of any type within Timeout. An Error from
// the peer is returned as an *Error, not as a Message.
func (c *Conn) Recv() (Message, error) {
	d := c.timeout()
	m, err := c.recv(d)
	if err != nil {
		return nil, c.recvErr(err, "a message", d)
	}
	if e, ok := m.(Error); ok {
		return nil, &e
	}
	return m, nil
}

// Send sends m within Timeout.
func (c *Conn) Send(m Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b, err := Append(c.wbuf[:0], m)
	if err != nil {
		return err
	}
	c.wbuf = b
	if err := c.nc.SetWriteDeadline(c.deadline(c.timeout())); err != nil {
		return fmt.Errorf("oob: sending %v to %s: %w", m.Type(), c.who(), err)
	}
	if _, err := c.nc.Write(b); err != nil {
		return fmt.Errorf("oob: sending %v to %s: %w", m.Type(), c.who(), err)
	}
	return nil
}
