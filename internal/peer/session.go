package peer

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/responder"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/verbs"
)

// ServeConfig says how Serve answers a client: rdmapeer's side of a
// two-node pair. Everything about a session comes from the client's Params
// except what belongs to this node: device, port, GID and CPU.
type ServeConfig struct {
	Device string // required: the first device served, a client's default
	// Rails are the other devices served (rdmapeer -device rxe0,rxe1): a
	// client names one in Params.Device, one session per rail.
	Rails []Rail
	Port  int // 0: the first active port, on every device
	// GIDIndex is this node's GID: -1 the best. A client may not choose
	// another: Params whose GIDIndex is neither -1 nor this are refused.
	GIDIndex int
	CPU      env.CPU  // the answering thread's; the zero CPU leaves it unpinned
	MemNode  env.Node // the NUMA node of the sessions' buffers (env.Place); none: the kernel's choice
	Limits   oob.Limits
	// Idle bounds the wait for the client's next request, between runs
	// and between sessions; 0: DefaultIdle; NoIdleLimit (any negative
	// value): no bound (TCP keep-alive still notices a vanished host).
	Idle time.Duration
	// Timeout is the RDMA loop's idle timeout when the client's Params
	// carry none, at most Limits.MaxIdleTimeout (a client asking for the
	// default never gets a longer busy-poll than one asking for the most),
	// and bounds the wait for the client's rdma_cm request whatever the
	// client asked; 0: 5 s.
	Timeout time.Duration
	// Others, if not nil, returns how many other sessions the server
	// serves now; the client is told when its session opens.
	Others func() int
	// Done, if not nil, is closed when the server shuts down: it ends a
	// wait for the client's rdma_cm request at once.
	Done <-chan struct{}
	// Reserve, if not nil, is asked for the bytes a session is about to
	// register; it returns what gives them back, or an error for the
	// client (matching oob.ErrBusy when other sessions hold the memory).
	Reserve func(bytes int) (release func(), err error)
	// Last, if not nil, is called once before serve sends the error that
	// ends the connection (its answering loop has stopped), or as serve
	// returns when it sends none: the server frees the session's slot
	// there, so that a client that reads the error and asks again at once
	// is not told the peer is busy.
	Last func()
	// Report, if not nil, is called once for each session when it ends,
	// and once for a connection that ends before its first Params.
	Report func(SessionReport)
	// LoadOnly is set for a connection admitted with no CPU of its own
	// (its first Params asked for a load stream, oob.FlagLoad): it may
	// open only load sessions.
	LoadOnly bool
}

// Rail is a device served beside ServeConfig.Device, with the NUMA node
// of its sessions' buffers.
type Rail struct {
	Device  string
	MemNode env.Node
}

// Devices lists the devices served, the default first.
func (c ServeConfig) Devices() []string {
	names := []string{c.Device}
	for _, r := range c.Rails {
		names = append(names, r.Device)
	}
	return names
}

// rail returns the device a client's Params name ("": the default), or
// an error matching oob.ErrInvalidParams that lists those served.
func (c ServeConfig) rail(name string) (Rail, error) {
	if name == "" || name == c.Device {
		return Rail{Device: c.Device, MemNode: c.MemNode}, nil
	}
	for _, r := range c.Rails {
		if r.Device == name {
			return r, nil
		}
	}
	return Rail{}, fmt.Errorf("%w: device %q: this rdmapeer serves %s (rdmapeer -device); name one of them in RDMABENCH_PEER_DEVICE, one per rail",
		oob.ErrInvalidParams, name, strings.Join(c.Devices(), ","))
}

// NoIdleLimit as ServeConfig.Idle lets a client wait as long as it likes
// between requests.
const NoIdleLimit time.Duration = -1

// SessionReport describes one session served by Serve.
type SessionReport struct {
	Client     string     // the client's address
	Params     oob.Params // zero for a connection that ended before any
	Device     string     // this side's device
	Sizes      []int      // distinct run sizes, in order of first use
	Runs       int
	RoundTrips uint64 // answered, every run, warm-up included
	Bytes      uint64 // a load stream's: what the client says it wrote
	Duration   time.Duration
	// Err is why the session ended; nil when the client ended it
	// cleanly (closed the connection or sent new Params between runs).
	Err error
}

// serve serves one client of rdmapeer on conn, which has done its
// handshake (oob.Accept), until the client closes it or a failure ends it:
// any number of sessions (Params), each any number of Runs, answered by a
// thread pinned to cfg.CPU with the same C loop as the loopback responder.
// Each session registers its own buffer, with only the remote access its
// operation needs, and deregisters it when it ends.
//
// It returns nil when the client closed the connection cleanly between
// runs. Otherwise it returns the error that ended it, after sending it to
// the client when the connection still works. The client's death during a
// run (its socket closes) stops the answering loop at once; a stalled
// client ends the loop after the idle timeout. Closing conn from another
// goroutine ends serve promptly; serve does not close conn. first is the client's first request when the Server's handshake has
// received it already (nil: none yet).
func serve(conn *oob.Conn, cfg ServeConfig, first oob.Message) error {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	switch {
	case cfg.Idle == 0:
		cfg.Idle = DefaultIdle
	case cfg.Idle < 0:
		cfg.Idle = 0 // conn.Next: no limit
	}
	s := &servedSession{conn: conn, cfg: cfg, client: "client", device: cfg.Device, start: time.Now()}
	if a := conn.NetConn().RemoteAddr(); a != nil {
		s.client = a.String()
	}
	sessions := 0
	for {
		m, err := first, error(nil)
		if first == nil {
			m, err = conn.Next(cfg.Idle)
		}
		first = nil
		if err == nil {
			switch m := m.(type) {
			case oob.Params:
				if s.active {
					s.end(nil)
				}
				sessions++
				err = s.open(m)
			case oob.Run:
				err = s.run(m)
			case oob.Done:
				err = s.loadDone(m)
			default:
				err = fmt.Errorf("%w: expected Params or Run from %s, got %v", oob.ErrProtocol, s.client, m.Type())
				s.finish()
				_ = conn.SendErr(err) // best effort: we end the connection
			}
			if err == nil {
				continue
			}
		} else if err == io.EOF {
			err = nil
		}
		s.finish()
		if s.active || sessions == 0 {
			s.end(err)
		}
		return err
	}
}

// servedSession is Serve's state for the current session.
type servedSession struct {
	conn    *oob.Conn
	cfg     ServeConfig
	client  string
	device  string // the session's device: the client's Params name one
	active  bool   // a session is open: rep, start and what it holds are its
	rep     SessionReport
	start   time.Time
	ep      *rdmalat.Endpoint
	release func()
	resp    responder.Loop
	seq     uint32
	last    bool // cfg.Last was called
	load    bool // the session is a load stream's target (load.go)
}

// finish calls cfg.Last, once: before the connection's last message.
// The device and memory go back in end, after it: a listener of the
// endpoint may still be open here, and the answering loop has stopped.
func (s *servedSession) finish() {
	if !s.last && s.cfg.Last != nil {
		s.last = true
		s.cfg.Last()
	}
}

// fail sends err to the client with code, prefixed with this side's name,
// and returns it; the error ends the connection.
func (s *servedSession) fail(code oob.Code, err error) error {
	s.finish()                                                                  // the error ends the connection: free its slot first
	_ = s.conn.SendError(code, fmt.Sprintf("rdmapeer (%s): %v", s.device, err)) // best effort: the session ends anyway
	return err
}

// failLoop is fail for the answering loop's error: an error completion
// goes as CodeCompletion with its status, vendor_err and queue, so that
// the client's error matches the status as its own would.
func (s *servedSession) failLoop(err error) error {
	var status verbs.WCStatus
	if !errors.As(err, &status) {
		return s.fail(oob.CodeInternal, err)
	}
	e := oob.Error{Code: oob.CodeCompletion, Msg: fmt.Sprintf("rdmapeer (%s): %v", s.device, err), WCStatus: uint32(status)}
	if c := (*loops.Completion)(nil); errors.As(err, &c) {
		e.VendorErr, e.RecvQueue = c.VendorErr, c.Recv
	}
	s.finish()
	_ = s.conn.SendErrorMessage(e) // best effort: the session ends anyway
	return err
}

// open starts a session: checks p, registers the buffer, exchanges the
// endpoints and connects the queue pair.
func (s *servedSession) open(p oob.Params) error {
	s.active = true
	s.device = s.cfg.Device
	s.rep = SessionReport{Client: s.client, Params: p, Device: s.device}
	s.start = time.Now()
	if err := p.Validate(s.cfg.Limits); err != nil {
		return s.fail(oob.CodeParams, err)
	}
	if s.load = p.Flags&oob.FlagLoad != 0; s.cfg.LoadOnly && !s.load {
		return s.fail(oob.CodeProtocol, fmt.Errorf("%w: this connection opened as a load stream, with no answering CPU: open a connection of its own for a latency session", oob.ErrProtocol))
	}
	rail, err := s.cfg.rail(p.Device)
	if err != nil {
		s.rep.Device = p.Device // the log line names the device asked for
		return s.fail(oob.CodeParams, err)
	}
	s.device, s.rep.Device = rail.Device, rail.Device
	if p.GIDIndex >= 0 && int(p.GIDIndex) != s.cfg.GIDIndex {
		own := fmt.Sprintf("its GID index %d (rdmapeer -gid-index)", s.cfg.GIDIndex)
		if s.cfg.GIDIndex < 0 {
			own = "the best GID of its port (rdmapeer -gid-index -1)"
		}
		return s.fail(oob.CodeParams, fmt.Errorf("%w: gid index %d: this rdmapeer uses %s; a client may not choose it (send -1)", oob.ErrInvalidParams, p.GIDIndex, own))
	}
	if s.cfg.Reserve != nil {
		release, err := s.cfg.Reserve(2 * int(p.Size))
		if err != nil {
			code := oob.CodeResource
			switch {
			case errors.Is(err, oob.ErrBusy):
				code = oob.CodeBusy
			case errors.Is(err, oob.ErrInvalidParams):
				code = oob.CodeParams
			}
			return s.fail(code, err)
		}
		s.release = release
	}
	if s.load {
		return s.openLoad(p, rail)
	}
	gid := s.cfg.GIDIndex
	timeout := loopTimeout(p, s.cfg)
	ep, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{
		Device: rail.Device, Port: s.cfg.Port, GIDIndex: env.GIDSetting(gid),
		Op: p.Op, Transport: p.Transport, Events: p.Flags&oob.FlagEvents != 0, CM: p.Flags&oob.FlagCM != 0,
		HugePages: p.Flags&oob.FlagHugePages != 0, THP: p.Flags&oob.FlagTHP != 0, ODP: p.Flags&oob.FlagODP != 0,
		MaxSize: int(p.Size), Inline: int(p.Inline), MTU: int(p.MTU), QoS: p.QoS,
		MemNode: rail.MemNode,
	})
	if err != nil {
		return s.fail(oob.CodeResource, err)
	}
	s.ep = ep
	s.rep.Device = ep.Device().Name
	// With rdma_cm the queue pairs connect before the client's Endpoint,
	// which is then for the record (oob's sequence).
	var client rdmalat.PeerInfo
	if ep.CM() {
		if client, err = s.acceptCM(ep, timeout); err != nil {
			return err
		}
	} else if err := s.conn.SendEndpoint(s.wire(ep)); err != nil {
		return err
	}
	ce, err := s.conn.RecvEndpoint()
	if err != nil {
		return err
	}
	if ce.Size < p.Size {
		return s.fail(oob.CodeProtocol, fmt.Errorf("%w: the client's buffer holds %d bytes, its Params say %d", oob.ErrProtocol, ce.Size, p.Size))
	}
	if !ep.CM() {
		client = peerInfoOf(ce)
		if err := ep.Connect(client); err != nil {
			return s.fail(oob.CodeResource, err)
		}
	}
	s.resp = server().New(ep, client, responder.Config{CPU: s.cfg.CPU, Timeout: timeout, MaxRoundTrips: s.cfg.Limits.WithDefaults().MaxRoundTrips})
	s.seq = 0
	return s.conn.Send(oob.Barrier{Seq: 0})
}

// run answers one Run: starts the loop, says so, then waits for the
// client's Done while the loop answers and a Watcher reads the socket.
func (s *servedSession) run(m oob.Run) error {
	switch {
	case s.load && s.active:
		return s.renewLoad(m)
	case s.ep == nil:
		return s.fail(oob.CodeProtocol, fmt.Errorf("%w: Run before Params", oob.ErrProtocol))
	case m.Seq != s.seq+1:
		return s.fail(oob.CodeProtocol, fmt.Errorf("%w: Run %d out of step: expected %d", oob.ErrProtocol, m.Seq, s.seq+1))
	case m.Size < 1 || m.Size > s.rep.Params.Size:
		return s.fail(oob.CodeParams, fmt.Errorf("%w: run size %d: must be 1..%d (the session's size)", oob.ErrInvalidParams, m.Size, s.rep.Params.Size))
	}
	s.seq = m.Seq
	ended := make(chan error, 1)
	if err := s.resp.Start(int(m.Size), func(err error) {
		select {
		case ended <- err:
		default:
		}
	}); err != nil {
		return s.fail(oob.CodeResource, err)
	}
	if err := s.conn.Send(oob.Barrier{Seq: m.Seq}); err != nil {
		s.resp.Abort()
		s.resp.Stop()
		return err
	}
	// A failure seen by the Watcher (the client died, sent an Error, or
	// this side closed the connection) stops the loop at once, wherever
	// it waits; the client's Done ends the Watcher without a failure.
	resp := s.resp
	w := s.conn.Watch(func(error) { resp.Abort() })
	var loopErr error
	select {
	case <-w.Ended():
	case loopErr = <-ended:
	}
	werr := w.Stop()
	answered, rerr := s.resp.Stop()
	if loopErr == nil {
		loopErr = rerr
	}
	s.rep.Runs++
	s.rep.RoundTrips += answered
	if !slices.Contains(s.rep.Sizes, int(m.Size)) {
		s.rep.Sizes = append(s.rep.Sizes, int(m.Size))
	}
	switch {
	case werr != nil:
		return fmt.Errorf("run %d (%d bytes, %d round trips answered): the client went away: %w", m.Seq, m.Size, answered, werr)
	case errors.Is(loopErr, responder.ErrRoundTripLimit):
		return s.fail(oob.CodeParams, fmt.Errorf("%w: run %d reached this peer's limit of %d round trips in one run (rdmapeer -max-round-trips)",
			oob.ErrInvalidParams, m.Seq, s.resp.MaxRoundTrips()))
	case errors.Is(loopErr, rdmalat.ErrTimeout):
		return s.fail(oob.CodeTimeout, loopErr)
	case loopErr != nil:
		return s.failLoop(loopErr)
	}
	ran, err := s.conn.RecvDone()
	if err != nil {
		return err
	}
	if err := s.conn.SendDone(answered); err != nil {
		return err
	}
	if s.rep.Params.Op.OneSided() {
		// READ and atomics: this side's CPU answered nothing; what the
		// client ran is what its operations did to this side's buffer.
		s.rep.RoundTrips += ran
		return nil
	}
	if ran != answered {
		return fmt.Errorf("%w: run %d: the client ran %d round trips, this side answered %d", rdmalat.ErrOrder, m.Seq, ran, answered)
	}
	return nil
}

// end closes the current session and reports it; with no session open,
// it reports the connection, which ended before its first Params.
func (s *servedSession) end(err error) {
	if !s.active {
		s.rep = SessionReport{Client: s.client, Device: s.device}
	}
	s.active = false
	if s.ep != nil {
		s.ep.Close()
		s.ep, s.resp = nil, nil
	}
	if s.release != nil {
		s.release()
		s.release = nil
	}
	s.rep.Err = err
	s.rep.Duration = time.Since(s.start)
	if s.cfg.Report != nil {
		s.cfg.Report(s.rep)
	}
	s.rep = SessionReport{}
}

// wire is this side's Endpoint for the client: the device, queue pair and
// buffer, and the CPU that answers and how many other sessions run beside
// it. (rdmalat, the client, converts the same fields for its side.)
func (s *servedSession) wire(ep *rdmalat.Endpoint) oob.Endpoint {
	info, dev := ep.Info(), ep.Device()
	w := oob.Endpoint{
		Device: dev.Name, Firmware: dev.Firmware, LinkLayer: dev.LinkLayer, Port: uint8(dev.Port),
		LID: info.LID, QPN: info.QPN, PSN: info.PSN, GID: info.GID, GIDIndex: int32(dev.GIDIndex),
		MTU: uint32(info.MTU), RKey: info.RKey, Addr: info.Addr, Size: uint32(info.Size),
	}
	w.CPU = -1 // oob's "not pinned"
	if id, pinned := s.cfg.CPU.ID(); pinned {
		w.CPU = int32(id)
	}
	if s.cfg.Others != nil {
		w.Sessions = uint16(min(max(s.cfg.Others(), 0), 1<<16-1))
	}
	return w
}

// server is rdmalat's server side: the answering loop and the rdma_cm
// accept, which its public API leaves out.
func server() responder.Hooks[*rdmalat.Endpoint, rdmalat.PeerInfo] {
	return responder.For[*rdmalat.Endpoint, rdmalat.PeerInfo]()
}

// newCookie draws a session's rdma_cm cookie, never 0 (0 is "none").
func newCookie() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("drawing an rdma_cm cookie: %w", err)
	}
	return binary.BigEndian.Uint64(b[:]) | 1, nil
}

// peerInfoOf is what the responder's endpoint needs of the client's.
func peerInfoOf(e oob.Endpoint) rdmalat.PeerInfo {
	return rdmalat.PeerInfo{LID: e.LID, QPN: e.QPN, PSN: e.PSN, GID: e.GID, MTU: int(e.MTU), RKey: e.RKey, Addr: e.Addr, Size: int(e.Size)}
}

// loopTimeout is the answering loop's idle timeout for p: the client's,
// which Validate bounds by Limits.MaxIdleTimeout, or for 0 this peer's
// default, bounded by the same limit.
func loopTimeout(p oob.Params, cfg ServeConfig) time.Duration {
	if p.IdleTimeout > 0 {
		return p.IdleTimeout
	}
	return min(cfg.Timeout, cfg.Limits.WithDefaults().MaxIdleTimeout)
}
