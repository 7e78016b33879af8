package rdmalat

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/rdmacm"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// Connecting through rdma_cm (perftest -R). An endpoint with
// EndpointConfig.CM builds the same verbs objects as any other; instead of
// Info and Connect, its queue pair is connected by internal/rdmacm (the
// server side Accepts on a cmListener, the client side Dials it), and what
// Connect would have taken from the peer's PeerInfo comes from the
// connection: the peer's buffer, QP number and Q_Key from the CM's private
// data, the UD address handle and the RC path MTU from rdma_cm. The
// latency loops cannot tell the difference.

// checkCM says why cfg cannot connect through rdma_cm.
func checkCM(cfg EndpointConfig) error {
	if cfg.CM && cfg.Transport == spec.UC {
		return errors.New("rdmalat: rdma_cm over uc: librdmacm connects RC and UD queue pairs only (perftest -R refuses UC too); use rc or ud, or connect without rdma_cm (unset RDMABENCH_CM)")
	}
	return nil
}

// CM reports whether the endpoint connects through rdma_cm.
func (e *Endpoint) CM() bool { return e.cfg.CM }

// cmListener is an rdma_cm listener on an endpoint's device address, for
// one connection: rdmapeer's side of a session with rdma_cm.
type cmListener struct{ l *rdmacm.Listener }

// Addr returns the address and port the listener is bound to (the port
// chosen by the kernel).
func (l *cmListener) Addr() netip.AddrPort { return l.l.Addr() }

// Close stops listening; an accepted connection lives on. Nil-safe.
func (l *cmListener) Close() error {
	if l == nil {
		return nil
	}
	return l.l.Close()
}

// listenCM listens for the peer's rdma_cm connection on the IP address of
// e's device and port, on a port the kernel picks.
func (e *Endpoint) listenCM() (*cmListener, error) {
	addr, err := e.cmAddr()
	if err != nil {
		return nil, err
	}
	l, err := rdmacm.Listen(netip.AddrPortFrom(addr, 0), qpTypes[e.cfg.Transport])
	if err != nil {
		return nil, err
	}
	return &cmListener{l}, nil
}

// acceptCM waits until ctx's deadline for the peer's connection on l and
// connects e's queue pair to it; it returns what the peer told of itself,
// for the responder's loop. With a cookie other than 0, only a request
// that carries it is accepted (the one the session's client was told);
// others are refused and the wait goes on.
func (e *Endpoint) acceptCM(ctx context.Context, l *cmListener, cookie uint64) (PeerInfo, error) {
	if err := e.checkCMConnect(); err != nil {
		return PeerInfo{}, err
	}
	cfg := e.cmConfig()
	cfg.Expect = cookie
	c, err := l.l.Accept(ctx, cfg)
	if err != nil {
		return PeerInfo{}, err
	}
	return e.adoptCM(c)
}

// dialCM connects e's queue pair through rdma_cm to the listener at addr
// (a peer's cmListener), from the IP address of e's device, within ctx's
// deadline, sending cookie (the one the peer named with its listener); it returns
// what the peer told of itself.
func (e *Endpoint) dialCM(ctx context.Context, addr netip.AddrPort, cookie uint64) (PeerInfo, error) {
	if err := e.checkCMConnect(); err != nil {
		return PeerInfo{}, err
	}
	src, err := e.cmAddr()
	if err != nil {
		return PeerInfo{}, err
	}
	cfg := e.cmConfig()
	cfg.Local.Cookie = cookie
	c, err := rdmacm.Dial(ctx, src, addr, cfg)
	if err != nil {
		return PeerInfo{}, err
	}
	return e.adoptCM(c)
}

// connectCMLoopback connects the loopback pair's endpoints through rdma_cm:
// the responder accepts on its device's address, the initiator dials it
// from its own.
func connectCMLoopback(local, responder *Endpoint, timeout time.Duration) error {
	for _, e := range []*Endpoint{local, responder} {
		if err := e.checkCMConnect(); err != nil {
			return err
		}
	}
	l, err := responder.listenCM()
	if err != nil {
		return err
	}
	defer l.Close() // one connection: the accepted one lives on
	src, err := local.cmAddr()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	srv, cli, err := rdmacm.Loopback(ctx, l.l, src, responder.cmConfig(), local.cmConfig())
	if err != nil {
		return err
	}
	if _, err = responder.adoptCM(srv); err != nil {
		cli.Close()
		return err
	}
	_, err = local.adoptCM(cli)
	return err
}

func (e *Endpoint) checkCMConnect() error {
	switch {
	case !e.cfg.CM:
		return errors.New("rdmalat: endpoint built without rdma_cm (EndpointConfig.CM): use Info and Connect")
	case e.remote != nil:
		return errors.New("rdmalat: endpoint already connected")
	}
	return nil
}

// cmAddr is the IP address rdma_cm binds to for e: that of e's GID when it
// is one (RoCE), else the best of the port's.
func (e *Endpoint) cmAddr() (netip.Addr, error) {
	if e.gid.Type != verbs.GIDTypeIB && !e.gid.IsLinkLocal() && !e.gid.IsZero() {
		return netip.AddrFrom16(e.gid.Raw).Unmap(), nil
	}
	return rdmacm.DeviceAddr(e.ctx, e.port)
}

// cmConfig is e's side of an rdma_cm connection: the receive half of its
// buffer, the remote access its operation needs, its MTU as a cap on the
// path MTU, and for UD the Q_Key the loops send with.
func (e *Endpoint) cmConfig() rdmacm.Config {
	return rdmacm.Config{
		QP:     e.qp,
		Local:  rdmacm.PeerInfo{Addr: e.mr.Addr() + uint64(e.lay.recv), Size: uint64(e.cfg.MaxSize), RKey: e.mr.RKey()},
		Access: remoteAccess(e.cfg.Op), // 0 (send): rdma_cm's; the buffer grants nothing remote anyway
		MTU:    e.mtu,
		QKey:   loops.UDQKey,
		TOS:    e.cfg.QoS.TrafficClass,
	}
}

// adoptCM takes a connection made for e: e keeps it until Close and sets
// what Connect would have set. On failure it closes c.
func (e *Endpoint) adoptCM(c *rdmacm.Conn) (PeerInfo, error) {
	r := c.Remote()
	if e.cfg.Transport == spec.UD && r.QKey != loops.UDQKey {
		c.Close()
		return PeerInfo{}, fmt.Errorf("rdmalat: rdma_cm: the peer's UD queue pair has Q_Key %#x, the loops send with %#x", r.QKey, loops.UDQKey)
	}
	e.cm = c
	if m := c.PathMTU(); m != 0 {
		e.mtu = m // RC: rdma_cm's path MTU (capped by e's); UD: the port's
	}
	e.ah = c.AH() // UD; owned by c
	remote := PeerInfo{
		QPN: r.QPN, GID: r.GID, MTU: e.mtu.Bytes(),
		RKey: r.RKey, Addr: r.Addr, Size: int(min(r.Size, 1<<31-1)),
	}
	e.remote = &remote
	return remote, nil
}

// closeCM closes e's rdma_cm connection (and with it the UD address
// handle), before the queue pair and the PD.
func (e *Endpoint) closeCM() error {
	if e.cm == nil {
		return nil
	}
	err := e.cm.Close()
	e.cm, e.ah = nil, nil
	return err
}

// CMSetupTime returns how long rdma_cm took to connect e (Dial: from
// address resolution; Accept: from the connection request) to RTS; 0
// without rdma_cm.
func (e *Endpoint) CMSetupTime() time.Duration {
	if e.cm == nil {
		return 0
	}
	return e.cm.SetupTime()
}

// dialCMPeer connects local through rdma_cm to the listener the peer named
// in its Endpoint, within timeout (and ctx).
func dialCMPeer(ctx context.Context, local *Endpoint, pe oob.Endpoint, timeout time.Duration) (PeerInfo, error) {
	if pe.CMAddr == "" {
		return PeerInfo{}, fmt.Errorf("%w: the session asked for rdma_cm but the peer named no rdma_cm listener (cm_addr)", oob.ErrProtocol)
	}
	addr, err := netip.ParseAddrPort(pe.CMAddr)
	if err != nil {
		return PeerInfo{}, fmt.Errorf("%w: the peer's rdma_cm listener %q: %v", oob.ErrProtocol, pe.CMAddr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return local.dialCM(ctx, addr, pe.CMCookie)
}
