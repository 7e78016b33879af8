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
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
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
func AcceptToken(nc net.Conn, timeout time.Duration, token string) (*Conn, error) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetKeepAliveConfig(KeepAlive) // best effort: only slows the detection of a vanished host
	}
	c := NewConn(nc)
	c.Timeout = timeout
	c.Token = token
	if _, err := c.AcceptHandshake(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

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
	var a Auth
	if c.Token != "" {
		a.MAC = AuthMAC(c.Token, ch.Nonce)
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
	if !checkAuth(c.Token, ch, m.(Auth)) {
		what := "wrong token"
		if m.(Auth).MAC == ([NonceSize]byte{}) {
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
	if err := c.nc.SetReadDeadline(time.Now().Add(d)); err != nil {
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
	if len(b) < max && c.nc.SetReadDeadline(time.Now().Add(50*time.Millisecond)) == nil {
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
	var dl time.Time
	if d > 0 {
		dl = time.Now().Add(d)
	}
	if err := c.nc.SetReadDeadline(dl); err != nil {
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
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.timeout())); err != nil {
		return fmt.Errorf("oob: sending %v to %s: %w", m.Type(), c.who(), err)
	}
	if _, err := c.nc.Write(b); err != nil {
		return fmt.Errorf("oob: sending %v to %s: %w", m.Type(), c.who(), err)
	}
	return nil
}

// SendHello sends h.
func (c *Conn) SendHello(h Hello) error { return c.Send(h) }

// RecvHello receives a Hello.
func (c *Conn) RecvHello() (Hello, error) {
	m, err := c.expect(TypeHello, c.timeout())
	if err != nil {
		return Hello{}, err
	}
	return m.(Hello), nil
}

// SendParams sends p. It does not validate p: the peer does.
func (c *Conn) SendParams(p Params) error { return c.Send(p) }

// RecvParams receives Params within Timeout.
func (c *Conn) RecvParams() (Params, error) {
	m, err := c.expect(TypeParams, c.timeout())
	if err != nil {
		return Params{}, err
	}
	return m.(Params), nil
}

// Next is rdmapeer's wait for the client's next request (Params or Run):
// it receives a message of any type within idle (no limit if idle <= 0)
// and returns io.EOF itself when the client closed the connection cleanly
// between messages. An Error from the client is returned as an *Error.
func (c *Conn) Next(idle time.Duration) (Message, error) {
	m, err := c.recv(idle)
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, c.recvErr(err, "request (Params or Run)", idle)
	}
	if e, ok := m.(Error); ok {
		return nil, &e
	}
	return m, nil
}

// SendEndpoint sends e.
func (c *Conn) SendEndpoint(e Endpoint) error { return c.Send(e) }

// RecvEndpoint receives an Endpoint.
func (c *Conn) RecvEndpoint() (Endpoint, error) {
	m, err := c.expect(TypeEndpoint, c.timeout())
	if err != nil {
		return Endpoint{}, err
	}
	return m.(Endpoint), nil
}

// SendRun sends Run{seq, size}.
func (c *Conn) SendRun(seq, size uint32) error { return c.Send(Run{Seq: seq, Size: size}) }

// RecvBarrier receives the peer's Barrier and checks that it carries seq.
func (c *Conn) RecvBarrier(seq uint32) error {
	m, err := c.expect(TypeBarrier, c.timeout())
	if err != nil {
		return err
	}
	if got := m.(Barrier).Seq; got != seq {
		return fmt.Errorf("%w: barrier out of step: expected %d, %s sent %d", ErrProtocol, seq, c.who(), got)
	}
	return nil
}

// Barrier sends Barrier{seq} and waits for the peer's Barrier with the same
// seq, for two sides that must both be ready. Both sides call it; the send runs alongside the receive, so it works
// on unbuffered connections too.
func (c *Conn) Barrier(seq uint32) error {
	sent := make(chan error, 1)
	go func() { sent <- c.Send(Barrier{Seq: seq}) }()
	m, err := c.expect(TypeBarrier, c.timeout())
	serr := <-sent
	if err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if got := m.(Barrier).Seq; got != seq {
		return fmt.Errorf("%w: barrier out of step: sent %d, %s sent %d", ErrProtocol, seq, c.who(), got)
	}
	return nil
}

// SendDone sends Done{roundTrips}.
func (c *Conn) SendDone(roundTrips uint64) error { return c.Send(Done{RoundTrips: roundTrips}) }

// RecvDone receives Done and returns its round-trip count.
func (c *Conn) RecvDone() (uint64, error) {
	m, err := c.expect(TypeDone, c.timeout())
	if err != nil {
		return 0, err
	}
	return m.(Done).RoundTrips, nil
}

// SendError sends Error{code, msg}. Unlike Send it never fails on msg:
// invalid UTF-8 is replaced and a msg over MaxString is cut short.
func (c *Conn) SendError(code Code, msg string) error {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) > MaxString {
		const more = "..."
		cut := MaxString - len(more)
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + more
	}
	return c.Send(Error{Code: code, Msg: msg})
}

// SendErr reports err to the peer with the Code that matches it
// (ErrInvalidParams: CodeParams, ErrBusy: CodeBusy, ErrVersion:
// CodeVersion, ErrProtocol and ErrMalformed: CodeProtocol,
// os.ErrDeadlineExceeded: CodeTimeout, else CodeInternal).
func (c *Conn) SendErr(err error) error {
	code := CodeInternal
	switch {
	case errors.Is(err, ErrInvalidParams):
		code = CodeParams
	case errors.Is(err, ErrBusy):
		code = CodeBusy
	case errors.Is(err, ErrVersion):
		code = CodeVersion
	case errors.Is(err, ErrAuth):
		code = CodeAuth
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrMalformed):
		code = CodeProtocol
	case errors.Is(err, os.ErrDeadlineExceeded):
		code = CodeTimeout
	}
	return c.SendError(code, err.Error())
}

// Watcher watches a Conn while the RDMA loop runs and no messages are
// expected. See Conn.Watch.
type Watcher struct {
	c        *Conn
	onFail   func(error)
	stopping atomic.Bool
	err      atomic.Pointer[error]
	failed   chan struct{}
	exited   chan struct{}
	stopOnce sync.Once
}

// Watch starts a goroutine that blocks reading the connection, with no
// deadline, until Stop. It reports a failure at once: the connection closed
// or reset (the peer process died: its kernel closes the socket), or an
// Error from the peer. On a failure it stores the error (Err), closes
// Failed and calls onFail (if not nil) from its goroutine. A message other
// than Error (the peer's Done, say) ends the watch without a failure and is
// returned by the next receive after Stop. The measured loop need not
// touch the socket: it may poll Err, a cheap atomic load, or let onFail set
// its own flag.
//
// While a Watcher runs, sends are allowed and receives fail. Watch panics
// if another Watcher of c has not been stopped.
func (c *Conn) Watch(onFail func(error)) *Watcher {
	w := &Watcher{c: c, onFail: onFail, failed: make(chan struct{}), exited: make(chan struct{})}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.watcher != nil {
		panic("oob: Watch while another Watcher of the Conn is active")
	}
	c.watcher = w
	if c.pending != nil || c.closed.Load() {
		close(w.exited) // the peer has already spoken, or we closed
		return w
	}
	_ = c.nc.SetReadDeadline(time.Time{}) // fails only on a closed conn, whose read then fails at once
	go w.run()
	return w
}

func (w *Watcher) run() {
	defer close(w.exited)
	c := w.c
	frame, err := c.readFrame()
	if err == nil {
		m, derr := Decode(frame)
		switch {
		case derr != nil:
			c.rerr = derr
			err = derr
		case m.Type() == TypeError:
			e := m.(Error)
			w.fail(&e)
			return
		default:
			c.pending = m
			return
		}
	}
	if w.stopping.Load() || c.closed.Load() {
		return // Stop or Close: not a failure
	}
	switch {
	case errors.Is(err, io.EOF):
		err = fmt.Errorf("%w: %s closed the connection during the run (its process exited or was killed): %w", ErrPeerLost, c.who(), err)
	case errors.Is(err, ErrMalformed), errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("%w: %w", ErrPeerLost, err)
	default:
		err = fmt.Errorf("%w: %s: %w", ErrPeerLost, c.who(), err)
	}
	w.fail(err)
}

func (w *Watcher) fail(err error) {
	if w.err.CompareAndSwap(nil, &err) {
		close(w.failed)
		if w.onFail != nil {
			w.onFail(err)
		}
	}
}

// Err returns the failure seen so far, or nil. It is an atomic load, cheap
// enough for a measured loop to poll now and then.
func (w *Watcher) Err() error {
	if p := w.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Failed is closed when the Watcher sees a failure.
func (w *Watcher) Failed() <-chan struct{} { return w.failed }

// Ended is closed when the Watcher stops reading, for any reason: a message
// arrived (the next receive after Stop returns it), a failure (Err), Stop,
// or Close. A side that waits for its peer's next message during the loop
// (rdmapeer waiting for Done) selects on it.
func (w *Watcher) Ended() <-chan struct{} { return w.exited }

// Stop ends the watch, unblocking the read with a past deadline, and waits
// for the goroutine to exit. A frame cut in half by Stop is kept and
// finished by the next receive, so the Conn stays usable. Stop returns
// Err(); it is idempotent.
func (w *Watcher) Stop() error {
	w.stopOnce.Do(func() {
		c := w.c
		w.stopping.Store(true)
		_ = c.nc.SetReadDeadline(aLongTimeAgo) // fails only on a closed conn, which also unblocks the read
		<-w.exited
		c.rmu.Lock()
		c.watcher = nil
		c.rmu.Unlock()
	})
	return w.Err()
}
