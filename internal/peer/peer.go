// Package peer is rdmapeer's server: it accepts clients of the rdmabench
// out-of-band protocol (package oob) on a listener and answers each one's
// RDMA round trips (Serve), a bounded number at a time, with a
// bound on the memory they register, logging one line per session. Who may
// connect (Config.Allow, Config.Token), how many sessions one client
// address may hold and which CPU a session answers on are the Server's.
//
// cmd/rdmapeer is this package behind flags; tests run it in-process or in
// a helper process.
package peer

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// Defaults.
const (
	DefaultMaxSessions = 4
	// DefaultMaxMemory is the registered memory all sessions together may
	// hold: DefaultMaxSessions sessions of the largest message (each
	// registers twice its size).
	DefaultMaxMemory = DefaultMaxSessions * 2 * (8 << 20)
	// DefaultIdle bounds the wait for a client's next request between
	// runs (ServeConfig.Idle 0); NoIdleLimit: no bound.
	DefaultIdle = 10 * time.Minute
	// DefaultMaxHandshakes bounds the connections that have not finished
	// the handshake (Hello, challenge, first Params). They hold no
	// session slot; a real client's handshake takes two round trips.
	DefaultMaxHandshakes = 64
	// DefaultHandshakeTimeout is how long a connection may take from its
	// accept to its first Params before it is dropped: two round trips and
	// a Params, with room for an emulated VM on a loaded host (2 s dropped
	// real clients there).
	DefaultHandshakeTimeout = 5 * time.Second
	// shutdownGrace is how long Shutdown lets handshakes in progress
	// finish, so that a client connecting then is told why it is turned
	// away rather than seeing its connection close.
	shutdownGrace = 100 * time.Millisecond
)

// Config configures a Server. Zero fields take defaults; none of them can
// be unlimited (Session.Idle can: NoIdleLimit).
type Config struct {
	// Session is what every session is served with: device, port, GID,
	// limits, idle bounds. Its CPU, Reserve and Report are set by the
	// Server (see CPUs).
	Session ServeConfig
	// CPUs are the CPUs the answering threads are pinned to: each
	// session takes one of its own, and a client that comes when all are
	// taken is told the peer is busy (two sessions busy-polling one CPU
	// would spoil each other's latency). Empty: not pinned, and sessions
	// run side by side wherever the scheduler puts them; each client's
	// config lines then say how many others ran when it opened.
	CPUs []int
	// RailCPUs, if set, are the answering CPUs of devices served that
	// answer elsewhere than CPUs: a node's rails on two NUMA nodes each
	// answer on their own node (rdmapeer's rule). A connection takes a
	// CPU of the device its first Params name, and keeps it.
	RailCPUs map[string][]int
	// MaxSessions bounds the sessions served at once; a client over it is
	// answered with an Error of oob.CodeBusy. A connection takes a slot
	// once its handshake is done. Default DefaultMaxSessions.
	MaxSessions int
	// MaxPerClient bounds the sessions of one client address; more are
	// told the peer is busy. Default DefaultMaxPerClient.
	MaxPerClient int
	// MaxHandshakes bounds the connections not yet through the handshake
	// (and those being told "busy"); more are closed at once. Default
	// DefaultMaxHandshakes.
	MaxHandshakes int
	// MaxPendingPerClient bounds one address's connections in their
	// handshake, one /64's for IPv6 (clientKey); more from it are closed
	// at once. Default
	// DefaultMaxPendingPerClient.
	MaxPendingPerClient int
	// HandshakeTimeout bounds the time from a connection's accept to its
	// first Params (Hello, challenge and answer included). Default
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Token, if set, is the secret every client must prove it knows
	// (oob.AcceptToken); it is never sent.
	Token string
	// Allow, if not empty, lists the only client addresses served; others
	// are closed at once.
	Allow []netip.Prefix
	// LogInterval bounds the log to one line per kind of refusal per
	// interval. Default DefaultLogInterval.
	LogInterval time.Duration
	// MaxMemory bounds the bytes registered by all sessions together.
	// Default DefaultMaxMemory.
	MaxMemory int64
	// Timeout bounds each send and receive of the exchange (handshake,
	// endpoints, Done). Default oob.DefaultTimeout.
	Timeout time.Duration
	// Logf logs one line; default log.Printf. What the Server passes it is
	// one line of text whatever clients send (see oneLine).
	Logf func(format string, args ...any)
}

// Stats counts what a Server has done.
type Stats struct {
	Sessions int   // sessions (and connections without any) that ended
	Failed   int   // of which ended with an error
	Refused  int   // connections refused: busy, over a limit, not allowed, not a client, a wrong token, or silent
	Active   int   // session slots taken now (a connection holds one from its first Params to its last answer)
	Pending  int   // connections now in their handshake or being refused
	Memory   int64 // bytes registered now
}

// Server serves rdmabench clients. Use New, then Serve, then Shutdown.
type Server struct {
	cfg      Config
	slots    chan int      // free session slots (their index picks the CPU)
	pending  chan struct{} // bound on connections before their session slot
	overflow chan struct{} // bound on connections over pending being told so

	rlog *rateLog
	done chan struct{} // closed by Shutdown: ends a session's rdma_cm accept
	// serveConn serves an admitted connection; tests replace it to hold
	// a session without a device.
	serveConn func(c *oob.Conn, cfg ServeConfig, first oob.Message) error

	mu         sync.Mutex
	ln         net.Listener
	conns      map[*oob.Conn]struct{} // connections in a session slot
	shaking    map[net.Conn]struct{}  // connections in their handshake
	perClient  map[netip.Prefix]int   // sessions per clientKey
	pendingPer map[netip.Prefix]int   // connections in their handshake per clientKey
	cpuBusy    map[int]bool           // CPUs of Config.CPUs that serve a session
	closing    bool
	memory     int64
	stats      Stats
	sessions   sync.WaitGroup
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = oob.DefaultTimeout
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	cfg.Logf = oneLine(cfg.Logf)
	if cfg.MaxHandshakes <= 0 {
		cfg.MaxHandshakes = DefaultMaxHandshakes
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.MaxPerClient <= 0 {
		cfg.MaxPerClient = DefaultMaxPerClient
	}
	if cfg.MaxPendingPerClient <= 0 {
		cfg.MaxPendingPerClient = DefaultMaxPendingPerClient
	}
	if cfg.LogInterval <= 0 {
		cfg.LogInterval = DefaultLogInterval
	}
	s := &Server{
		cfg: cfg, slots: make(chan int, cfg.MaxSessions), pending: make(chan struct{}, cfg.MaxHandshakes),
		overflow: make(chan struct{}, 16), rlog: newRateLog(cfg.Logf, cfg.LogInterval), done: make(chan struct{}),
		serveConn: serve,
		conns:     map[*oob.Conn]struct{}{}, shaking: map[net.Conn]struct{}{},
		perClient: map[netip.Prefix]int{}, pendingPer: map[netip.Prefix]int{}, cpuBusy: map[int]bool{},
	}
	for i := range cfg.MaxSessions {
		s.slots <- i
	}
	return s
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("peer: server closed")

// Serve accepts connections on ln and serves each in its own goroutine,
// until Shutdown (it then returns ErrServerClosed) or a permanent accept
// failure. It closes ln when it returns.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()
	defer ln.Close()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: wait, as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.cfg.Logf("accept: %v; retrying in %v", err, delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		ip := remoteIP(nc)
		if !s.allowed(ip) {
			nc.Close() // not a word to a stranger
			s.count(func(st *Stats) { st.Refused++ })
			s.rlog.printf("connections refused by -allow", "refused %s: not in -allow %s", nc.RemoteAddr(), formatPrefixes(s.cfg.Allow))
			continue
		}
		if !s.pend(ip) {
			nc.Close()
			s.count(func(st *Stats) { st.Refused++ })
			s.rlog.printf("connections over -max-pending-per-client", "refused %s: %d connections of %s are already in their handshake", nc.RemoteAddr(), s.cfg.MaxPendingPerClient, clientName(clientKey(ip)))
			continue
		}
		select {
		case s.pending <- struct{}{}:
			s.sessions.Add(1)
			go s.handle(nc, ip)
			continue
		default:
		}
		select {
		case s.overflow <- struct{}{}:
			s.sessions.Add(1)
			go s.tooMany(nc, ip)
		default:
			nc.Close() // far over the limits: not even a word
			s.unpend(ip)
			s.count(func(st *Stats) { st.Refused++ })
			s.rlog.printf("connections over -max-handshakes", "refused %s: %d connections in their handshake", nc.RemoteAddr(), s.cfg.MaxHandshakes)
		}
	}
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// handle runs one connection: the handshake (Hello, challenge, first
// Params), bounded as a whole by HandshakeTimeout and holding no session
// slot, then a session with a slot, a count for its address and a CPU, or
// a refusal when one of them is not free.
func (s *Server) handle(nc net.Conn, ip netip.Addr) {
	defer s.sessions.Done()
	client := nc.RemoteAddr().String()
	timeout := s.cfg.HandshakeTimeout
	s.mu.Lock()
	if s.closing {
		// Accepted just before Shutdown closed the listener, and not seen
		// by it: give it Shutdown's grace here.
		timeout = min(timeout, shutdownGrace)
	} else {
		s.shaking[nc] = struct{}{}
	}
	s.stats.Pending++
	s.mu.Unlock()

	// One deadline from the accept to the first Params, every message of
	// the handshake included: a connection that says hello and then
	// nothing, or each message just within a bound, takes no session slot.
	c, err := oob.AcceptWithin(nc, timeout, s.cfg.Token)
	var first oob.Message
	if err == nil {
		first, err = c.Next(0) // by c.Deadline
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%s closed the connection before its first Params", client)
		}
		if err != nil {
			c.Close()
		}
		c.Deadline = time.Time{} // the session's own bounds from here
	}
	s.mu.Lock()
	delete(s.shaking, nc)
	closing := s.closing
	var adm admission
	var reason, refusal string
	if err == nil && !closing {
		var device string
		if p, ok := first.(oob.Params); ok {
			device = p.Device
		}
		adm, reason, refusal = s.admitLocked(ip, device, !isLoad(first))
		if refusal == "" {
			// Tracked under s.mu, so that Shutdown sees every connection
			// in a slot.
			s.conns[c] = struct{}{}
			s.stats.Active++
		}
	}
	s.stats.Pending--
	if err != nil || closing || refusal != "" {
		s.stats.Refused++
	}
	s.mu.Unlock()
	<-s.pending
	s.unpend(ip)
	switch {
	case err != nil:
		switch {
		case closing:
		case errors.Is(err, oob.ErrAuth):
			s.rlog.printf("clients refused for their token", "rejected: %v", err)
		case strings.Contains(err.Error(), client): // oob named it
			s.rlog.printf("handshakes rejected", "rejected: %v", err)
		default:
			s.rlog.printf("handshakes rejected", "rejected %s: %v", client, err)
		}
		return
	case closing:
		// Shutdown came during the handshake: say so, as it does to the
		// connections it finds in a session.
		_ = c.SendError(oob.CodeInternal, "rdmapeer is shutting down") // best effort: we close anyway
		c.Close()
		return
	case refusal != "":
		_ = c.SendError(oob.CodeBusy, refusal) // best effort: we close anyway
		c.Close()
		s.rlog.printf("clients refused as "+reason, "refused %s: %s", client, refusal)
		return
	}
	s.serve(c, adm, first)
}

// serve runs the session of c, admitted as adm, from its first request.
func (s *Server) serve(c *oob.Conn, adm admission, first oob.Message) {
	// What it held goes back before the connection's last message (the
	// error that ends it), so that a client that reads it and asks again
	// at once finds the slot and its count free; and in the same critical
	// section that stops counting it: a client that sees Active drop must
	// find it free. The connection stays in conns until it is closed, for
	// Shutdown.
	released := false
	release := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !released {
			released = true
			s.releaseLocked(adm)
			s.stats.Active--
		}
	}
	defer func() {
		release()
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	c.Timeout = s.cfg.Timeout
	cfg := s.cfg.Session
	cfg.CPU = adm.cpu
	cfg.Reserve = s.reserve
	cfg.Report = s.report
	cfg.Others = func() int { return s.Stats().Active - 1 }
	cfg.Done = s.done
	cfg.Last = release
	cfg.LoadOnly = isLoad(first)
	_ = s.serveConn(c, cfg, first) // reported, session by session, through report
}

// tooMany answers a client that comes while MaxHandshakes connections are
// in their handshake: busy, if it says hello at once, so that it asks
// again later rather than taking this for something that is not rdmapeer.
func (s *Server) tooMany(nc net.Conn, ip netip.Addr) {
	defer s.sessions.Done()
	defer s.unpend(ip)
	defer func() { <-s.overflow }()
	defer nc.Close()
	s.count(func(st *Stats) { st.Refused++ })
	c := oob.NewConn(nc)
	c.Timeout = shutdownGrace
	if _, err := c.RecvHello(); err != nil {
		return
	}
	msg := fmt.Sprintf("rdmapeer is busy: %d connections are opening at once; try again later", s.cfg.MaxHandshakes)
	_ = c.SendError(oob.CodeBusy, msg) // best effort: we close anyway
	s.rlog.printf("clients refused as busy", "refused %s: busy (%d connections in their handshake)", nc.RemoteAddr(), s.cfg.MaxHandshakes)
}

// reserve is the sessions' registered-memory budget.
func (s *Server) reserve(n int) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	max := s.cfg.MaxMemory
	switch {
	case int64(n) > max:
		return nil, fmt.Errorf("%w: the session would register %d bytes (twice its size), over this peer's limit of %d (rdmapeer -max-memory)", oob.ErrInvalidParams, n, max)
	case s.memory+int64(n) > max:
		return nil, fmt.Errorf("%w: the session would register %d bytes, and other sessions hold %d of this peer's %d (rdmapeer -max-memory); try again later", oob.ErrBusy, n, s.memory, max)
	}
	s.memory += int64(n)
	s.stats.Memory = s.memory
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.memory -= int64(n)
			s.stats.Memory = s.memory
			s.mu.Unlock()
		})
	}, nil
}

// Stats returns the Server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Shutdown stops accepting, tells every client the peer is going away (an
// Error, which ends a client's run at once), closes their connections,
// which stops their loops and frees their sessions, and waits for that.
// A client in its handshake is told too once the handshake is done;
// connections still silent after a short grace are closed.
func (s *Server) Shutdown() {
	s.mu.Lock()
	if !s.closing {
		close(s.done)
	}
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
	conns := make([]*oob.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	shaking := len(s.shaking)
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.SendError(oob.CodeInternal, "rdmapeer is shutting down") // best effort: we close anyway
		c.Close()
	}
	if shaking > 0 {
		time.Sleep(shutdownGrace)
		s.mu.Lock()
		for nc := range s.shaking {
			nc.Close() // its handshake fails at once; it was silent
		}
		s.mu.Unlock()
	}
	s.sessions.Wait()
	s.rlog.flush()
}
