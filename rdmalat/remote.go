package rdmalat

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// RemoteConfig says how DialPeer sets up a two-node pair.
type RemoteConfig struct {
	// Endpoint is this side's, the initiator's. Its MaxSize is the largest
	// message of the session; its Op, MTU and Inline are sent to the peer,
	// which builds its own endpoint with them. Its Device, Port and
	// GIDIndex are this node's only: the peer uses its own (rdmapeer
	// -device, -port, -gid-index).
	Endpoint EndpointConfig
	// PeerDevice names the peer's device for the session, one of those
	// rdmapeer serves (rdmapeer -device mlx5_0,mlx5_1: a node's rails);
	// "": its first. A peer that does not serve it refuses the session
	// (ErrPeerParams), listing those it does.
	PeerDevice string
	// CPU pins the initiator's thread; the zero CPU leaves it unpinned.
	// The peer pins its answering thread itself (rdmapeer -cpu).
	CPU env.CPU
	// Timeout bounds each step of the exchange with the peer and, on both
	// sides, every wait of the RDMA loop (sent as Params.IdleTimeout).
	// 0: 5 s.
	Timeout time.Duration
	// Token answers the peer's challenge when it requires one (rdmapeer
	// -token; RDMABENCH_PEER_TOKEN); it is never sent itself.
	Token string
}

// DialPeer connects to the rdmapeer at addr (host:port, or a bare host for
// port 18515), opens one session there and returns the
// two-node pair: Local is this side's endpoint, the Responder is the peer,
// which answers each Run of the pair from its own node. Cancelling ctx
// aborts the dial and the handshake. Close ends the session; the peer then
// frees its side.
//
// Errors say what went wrong and where: a malformed address (ErrPeerAddr),
// nothing listening (the dial's error), something that is not an rdmapeer
// (ErrNotPeer), a different protocol version (ErrPeerVersion), a peer at
// its limits (ErrPeerBusy), refusing the parameters (ErrPeerParams) or the
// token (ErrPeerAuth), and device failures on either side.
//
// A peer that answers "busy" (all its session slots, or its registered
// memory, taken by other sessions) is asked again, with backoff, for up to
// cfg.Timeout in all; the error then says how long it tried.
func DialPeer(ctx context.Context, addr string, cfg RemoteConfig) (*Pair, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Endpoint.Op == 0 {
		cfg.Endpoint.Op = spec.Write
	}
	if cfg.Endpoint.Transport == 0 {
		cfg.Endpoint.Transport = spec.RC
	}
	ecfg := cfg.Endpoint
	if ecfg.MaxSize < 1 || ecfg.MaxSize > 1<<31-1 {
		return nil, fmt.Errorf("rdmalat: message size %d: want 1 byte to 2 GiB", ecfg.MaxSize)
	}
	// What the peer would refuse is refused here, before any connection.
	if err := ecfg.Transport.Carries(ecfg.Op); err != nil {
		return nil, fmt.Errorf("rdmalat: %w", err)
	}
	if err := checkCM(ecfg); err != nil {
		return nil, err
	}
	if ecfg.Events && !ecfg.Op.Events() {
		return nil, fmt.Errorf("rdmalat: events with %v: perftest has no events mode for plain RDMA WRITE (its receiver polls memory); unset RDMABENCH_EVENTS", ecfg.Op)
	}
	start := time.Now()
	deadline := start.Add(cfg.Timeout)
	backoff := busyBackoff
	for tries := 1; ; tries++ {
		p, err := dialPeerOnce(ctx, addr, cfg)
		if err == nil || !errors.Is(err, oob.ErrBusy) {
			return p, err
		}
		// Jitter: clients refused together come back apart. The last try
		// comes at the deadline.
		wait := min(backoff/2+rand.N(backoff), time.Until(deadline))
		if wait <= 0 {
			return nil, fmt.Errorf("%w (still busy after %d tries over %v: RDMABENCH_TIMEOUT sets how long to keep trying)",
				err, tries, time.Since(start).Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (gave up after %d tries over %v: %w)", err, tries, time.Since(start).Round(time.Millisecond), context.Cause(ctx))
		case <-t.C:
		}
		backoff = min(2*backoff, maxBusyBackoff)
	}
}

// The first and the longest wait before asking a busy peer again.
const (
	busyBackoff    = 20 * time.Millisecond
	maxBusyBackoff = time.Second
)

// dialPeerOnce is one try of DialPeer, with cfg checked. A dial error
// names the address itself (oob.Dial); a session error is wrapped here
// with it, once.
func dialPeerOnce(ctx context.Context, addr string, cfg RemoteConfig) (_ *Pair, err error) {
	ecfg := cfg.Endpoint
	conn, err := oob.DialToken(ctx, addr, cfg.Timeout, cfg.Token)
	if err != nil {
		return nil, err
	}
	resp := &remoteResponder{conn: conn, addr: addr}
	p := &Pair{Mode: "two-node", CPUs: [2]env.CPU{cfg.CPU, {}}, Timeout: cfg.Timeout, Responder: resp}
	defer func() {
		if err != nil {
			p.Close()
			err = sessionErr(addr, err)
		}
	}()
	inline := max(ecfg.Inline, InlinePerftest)
	if err = conn.SendParams(oob.Params{
		Op: ecfg.Op, Transport: ecfg.Transport, Size: uint32(ecfg.MaxSize), MTU: uint32(max(ecfg.MTU, 0)),
		Inline: int32(min(inline, 1<<31-1)), GIDIndex: -1, IdleTimeout: cfg.Timeout, Flags: wireFlags(ecfg),
		QoS: ecfg.QoS, Device: cfg.PeerDevice,
	}); err != nil {
		resp.close()
		return nil, err
	}
	// The peer's answer first: a peer that refuses the session says so
	// whatever the state of this side's device.
	pe, err := conn.RecvEndpoint()
	if err != nil {
		resp.close()
		if f := wireFlags(ecfg) & (oob.FlagHugePages | oob.FlagODP | oob.FlagTHP); f != 0 && errors.Is(err, oob.ErrInvalidParams) && strings.Contains(err.Error(), "unknown bits") {
			err = fmt.Errorf("%w (an rdmapeer built before RDMABENCH_HUGEPAGES, RDMABENCH_HUGEPAGES=thp and RDMABENCH_ODP existed refuses them as unknown flag bits: run this rdmabench's rdmapeer, or unset them)", err)
		}
		return nil, err
	}
	local, err := NewEndpoint(ecfg)
	if err != nil {
		_ = conn.SendError(oob.CodeResource, "the client could not set up its endpoint: "+err.Error()) // best effort: we close anyway
		resp.close()
		return nil, err
	}
	p.Local = local
	p.closers = append(p.closers, local.Close, resp.close) // the session ends before the endpoint closes
	if int(pe.Size) < ecfg.MaxSize {
		err = fmt.Errorf("%w: the peer's buffer holds %d bytes, the session needs %d", oob.ErrProtocol, pe.Size, ecfg.MaxSize)
		_ = conn.SendErr(err) // best effort: we close anyway
		return nil, err
	}
	if ecfg.CM {
		p.Remote, err = dialCMPeer(ctx, local, pe, cfg.Timeout)
	} else {
		p.Remote = peerInfoOf(pe)
		err = local.Connect(p.Remote)
	}
	if err != nil {
		_ = conn.SendError(oob.CodeResource, "the client could not connect to this peer's queue pair: "+err.Error()) // best effort
		return nil, err
	}
	if err = conn.SendEndpoint(wireOf(local)); err != nil {
		return nil, err
	}
	if err = conn.RecvBarrier(0); err != nil {
		return nil, err
	}
	p.PeerDevice = DeviceInfo{
		Name: pe.Device, Firmware: pe.Firmware, LinkLayer: pe.LinkLayer, Port: int(pe.Port),
		MTU: local.Device().MTU, GIDIndex: int(pe.GIDIndex),
	}
	p.PeerCPU = cpuOfWire(pe.CPU)
	p.PeerSessions = int(pe.Sessions)
	p.peer = &peerDial{addr: addr, cfg: cfg}
	return p, nil
}

// cpuOfWire reads oob.Endpoint.CPU, where -1 is "not pinned".
func cpuOfWire(c int32) env.CPU {
	if c < 0 {
		return env.CPU{}
	}
	return env.PinTo(int(c))
}

// wireFlags are the session flags of an endpoint configuration.
func wireFlags(c EndpointConfig) oob.Flags {
	var f oob.Flags
	if c.Events {
		f |= oob.FlagEvents
	}
	if c.CM {
		f |= oob.FlagCM
	}
	if c.HugePages {
		f |= oob.FlagHugePages
	}
	if c.ODP {
		f |= oob.FlagODP
	}
	if c.THP {
		f |= oob.FlagTHP
	}
	return f
}

// peerInfoOf is what an endpoint needs of the other side's oob.Endpoint.
// internal/peer, the protocol's other side, has its own copy: a public
// function here would put oob's type in rdmalat's API.
func peerInfoOf(e oob.Endpoint) PeerInfo {
	return PeerInfo{LID: e.LID, QPN: e.QPN, PSN: e.PSN, GID: e.GID, MTU: int(e.MTU), RKey: e.RKey, Addr: e.Addr, Size: int(e.Size)}
}

// wireOf describes e for the other side of a two-node session.
func wireOf(e *Endpoint) oob.Endpoint {
	info, dev := e.Info(), e.Device()
	return oob.Endpoint{
		Device: dev.Name, Firmware: dev.Firmware, LinkLayer: dev.LinkLayer, Port: uint8(dev.Port),
		LID: info.LID, QPN: info.QPN, PSN: info.PSN, GID: info.GID, GIDIndex: int32(dev.GIDIndex),
		MTU: uint32(info.MTU), RKey: info.RKey, Addr: info.Addr, Size: uint32(info.Size),
	}
}

// remoteResponder is the Responder of a two-node pair: each Start is a Run
// message answered by the peer's Barrier, each Stop a Done exchange. While
// the initiator's loop runs, a Watcher reads the socket: the peer's death
// (its kernel closes the socket) or an Error from it ends the loop at once
// through abort, and the measured loop never touches the socket.
type remoteResponder struct {
	conn   *oob.Conn
	addr   string
	seq    uint32
	w      *oob.Watcher
	ran    uint64
	runErr error
	ended  error // why the session ended; every later Start fails with it
}

func (r *remoteResponder) Start(size int, abort func(error)) error {
	if r.ended != nil {
		return r.ended
	}
	r.seq++
	r.ran, r.runErr = 0, nil
	if err := r.conn.SendRun(r.seq, uint32(size)); err != nil {
		return r.end(err)
	}
	if err := r.conn.RecvBarrier(r.seq); err != nil {
		return r.end(err)
	}
	r.w = r.conn.Watch(func(err error) {
		abort(fromPeer(fmt.Errorf("two-node run: %w", err)))
	})
	return nil
}

func (r *remoteResponder) endRun(ran uint64, runErr error) { r.ran, r.runErr = ran, runErr }

func (r *remoteResponder) Stop() (uint64, error) {
	if r.w == nil {
		return 0, nil
	}
	if isCompletion(r.runErr) {
		// Give the peer's account of the failure a moment to arrive.
		t := time.NewTimer(peerErrorWait)
		select {
		case <-r.w.Failed():
		case <-r.w.Ended():
		case <-t.C:
		}
		t.Stop()
	}
	werr := r.w.Stop()
	r.w = nil
	switch {
	case werr != nil:
		return 0, r.end(werr)
	case r.runErr != nil:
		// The run failed on this side (a stalled peer, an RDMA error): the
		// queue pairs' state is unknown and the peer may not answer, so
		// the session ends here rather than after another timeout.
		_ = r.end(r.runErr)
		return 0, nil
	}
	if err := r.conn.SendDone(r.ran); err != nil {
		return 0, r.end(err)
	}
	answered, err := r.conn.RecvDone()
	if err != nil {
		return 0, r.end(err)
	}
	return answered, nil
}

// end ends the session after err and returns err with the peer named.
func (r *remoteResponder) end(err error) error {
	err = sessionErr(r.addr, err)
	if r.ended == nil {
		r.ended = fmt.Errorf("%w (the session has ended)", err)
	}
	r.conn.Close()
	return err
}

// sessionErr adds to err that it ended the session with the rdmapeer at
// addr, naming addr only when err does not already (oob's errors name
// the other side).
func sessionErr(addr string, err error) error {
	if strings.Contains(err.Error(), addr) {
		return fromPeer(fmt.Errorf("two-node session: %w", err))
	}
	return fromPeer(fmt.Errorf("two-node session with rdmapeer at %s: %w", addr, err))
}

// close ends the session: the peer sees the connection close between runs
// and frees its side.
func (r *remoteResponder) close() error {
	if r.w != nil {
		r.w.Stop()
		r.w = nil
	}
	if r.ended == nil {
		r.ended = errors.New("rdmalat: the two-node pair is closed")
	}
	return r.conn.Close()
}
