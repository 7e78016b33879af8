// Package peer is rdmapeer's server: it accepts clients of the rdmabench
// out-of-band protocol (package oob) on a listener and answers each one's
// RDMA round trips (rdmalat.Serve), a bounded number at a time, with a
// bound on the memory they register, logging one line per session.
//
// cmd/rdmapeer is this package behind flags; tests run it in-process or in
// a helper process.
package peer

import (
	"errors"
	"fmt"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/oob"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// Defaults.
const (
	DefaultMaxSessions = 4
	// DefaultMaxMemory is the registered memory all sessions together may
	// hold: DefaultMaxSessions sessions of the largest message (each
	// registers twice its size).
	DefaultMaxMemory = DefaultMaxSessions * 2 * (8 << 20)
	// DefaultIdle bounds the wait for a client's next request between
	// runs.
	DefaultIdle = 10 * time.Minute
)

// Config configures a Server. Zero fields take defaults.
type Config struct {
	// Session is what every session is served with: device, port, GID,
	// limits, idle bounds. Its CPU, Reserve and Report are set by the
	// Server (see CPUs).
	Session rdmalat.ServeConfig
	// CPUs are the CPUs the answering threads are pinned to: concurrent
	// sessions take them in turn, one per session slot. Empty: not
	// pinned.
	CPUs []int
	// MaxSessions bounds the sessions served at once; a client over it is
	// answered with an Error of oob.CodeBusy. Default DefaultMaxSessions.
	MaxSessions int
	// MaxMemory bounds the bytes registered by all sessions together.
	// Default DefaultMaxMemory.
	MaxMemory int64
	// Timeout bounds each send and receive of the exchange (handshake,
	// endpoints, Done). Default oob.DefaultTimeout.
	Timeout time.Duration
	// Logf logs one line; default log.Printf.
	Logf func(format string, args ...any)
}

// Stats counts what a Server has done.
type Stats struct {
	Sessions int   // sessions (and connections without any) that ended
	Failed   int   // of which ended with an error
	Refused  int   // connections refused: busy or not a client
	Active   int   // session slots taken now (a connection holds one from accept to close)
	Memory   int64 // bytes registered now
}

// Server serves rdmabench clients. Use New, then Serve, then Shutdown.
type Server struct {
	cfg   Config
	slots chan int      // free session slots (their index picks the CPU)
	extra chan struct{} // bound on connections being refused at once

	mu       sync.Mutex
	ln       net.Listener
	conns    map[*oob.Conn]struct{}
	closing  bool
	memory   int64
	stats    Stats
	sessions sync.WaitGroup
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
	if cfg.Session.Idle == 0 {
		cfg.Session.Idle = DefaultIdle
	}
	s := &Server{cfg: cfg, slots: make(chan int, cfg.MaxSessions), extra: make(chan struct{}, 16), conns: map[*oob.Conn]struct{}{}}
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
		select {
		case slot := <-s.slots:
			s.count(func(st *Stats) { st.Active++ })
			s.sessions.Add(1)
			go s.serve(nc, slot)
		default:
			select {
			case s.extra <- struct{}{}:
				s.sessions.Add(1)
				go s.refuse(nc)
			default:
				nc.Close() // far over the limit: not even a word
				s.count(func(st *Stats) { st.Refused++ })
			}
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

// track adds c to the connections Shutdown closes; false if shutting down.
func (s *Server) track(c *oob.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c *oob.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// serve runs one connection in session slot slot.
func (s *Server) serve(nc net.Conn, slot int) {
	defer s.sessions.Done()
	defer func() {
		s.slots <- slot
		s.count(func(st *Stats) { st.Active-- })
	}()
	client := nc.RemoteAddr().String()
	c, err := oob.Accept(nc, s.cfg.Timeout)
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		s.cfg.Logf("rejected %s: %v", client, err)
		return
	}
	defer c.Close()
	if !s.track(c) {
		return
	}
	defer s.untrack(c)
	cfg := s.cfg.Session
	cfg.CPU = -1
	if len(s.cfg.CPUs) > 0 {
		cfg.CPU = s.cfg.CPUs[slot%len(s.cfg.CPUs)]
	}
	cfg.Reserve = s.reserve
	cfg.Report = s.report
	_ = rdmalat.Serve(c, cfg) // reported, session by session, through report
}

// refuse answers a client over the session limit: a handshake, so that it
// learns who answers, then an Error of CodeBusy in place of its session.
func (s *Server) refuse(nc net.Conn) {
	defer s.sessions.Done()
	defer func() { <-s.extra }()
	s.count(func(st *Stats) { st.Refused++ })
	client := nc.RemoteAddr().String()
	c, err := oob.Accept(nc, s.cfg.Timeout)
	if err != nil {
		s.cfg.Logf("rejected %s: %v", client, err)
		return
	}
	defer c.Close()
	// Read the client's Params first: closing with them unread would reset
	// the connection, and the client might lose the Error.
	_, _ = c.Next(s.cfg.Timeout)
	msg := fmt.Sprintf("rdmapeer is busy: all %d of its session slots are taken (rdmapeer -max-sessions); try again later", s.cfg.MaxSessions)
	_ = c.SendError(oob.CodeBusy, msg) // best effort: we close anyway
	s.cfg.Logf("refused %s: busy (all %d session slots taken)", client, s.cfg.MaxSessions)
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

// report logs one session in one line.
func (s *Server) report(r rdmalat.SessionReport) {
	s.count(func(st *Stats) {
		st.Sessions++
		if r.Err != nil {
			st.Failed++
		}
	})
	s.cfg.Logf("%s", FormatReport(r))
}

// FormatReport returns the log line of a session: client, operation,
// sizes, runs, round trips, duration and result.
func FormatReport(r rdmalat.SessionReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s", r.Client)
	if r.Params == (oob.Params{}) {
		b.WriteString(" no session")
	} else {
		sizes := make([]string, len(r.Sizes))
		for i, n := range r.Sizes {
			sizes[i] = strconv.Itoa(n)
		}
		if len(sizes) == 0 {
			sizes = []string{"none"}
		}
		fmt.Fprintf(&b, " device=%s op=%v max-size=%d sizes=%s runs=%d round-trips=%d",
			r.Device, r.Params.Op, r.Params.Size, strings.Join(sizes, ","), r.Runs, r.RoundTrips)
	}
	fmt.Fprintf(&b, " duration=%v", r.Duration.Round(time.Millisecond))
	if r.Err != nil {
		fmt.Fprintf(&b, " result=error: %v", r.Err)
	} else {
		b.WriteString(" result=ok")
	}
	return b.String()
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
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
	conns := make([]*oob.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.SendError(oob.CodeInternal, "rdmapeer is shutting down") // best effort: we close anyway
		c.Close()
	}
	s.sessions.Wait()
}
