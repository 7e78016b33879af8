package rdmacm

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/verbs"
)

// Listener waits for connection requests on an IP address and port
// (rdma_bind_addr + rdma_listen), as perftest -R's server does.
type Listener struct {
	mu      sync.Mutex // held by Accept and Close
	closing atomic.Bool
	cm      *cmID
	cleanup runtime.Cleanup
	ps      portSpace
	typ     verbs.QPType
	addr    netip.AddrPort
	device  string
	port    uint8
}

// Listen binds to addr and listens for connections of QPs of type typ (RC
// or UD). Port 0 picks a free port: see Addr. An address on an RDMA device
// binds the listener to that device (see Device); the unspecified address
// listens on all of them.
func Listen(addr netip.AddrPort, typ verbs.QPType) (*Listener, error) {
	var ps portSpace
	switch typ {
	case verbs.RC:
		ps = psTCP
	case verbs.UD:
		ps = psUDP
	default:
		return nil, &Error{Op: "rdma_listen", Err: errUnsupported.Err,
			Detail: fmt.Sprintf("%v over rdma_cm: librdmacm connects RC and UD only (perftest -R refuses UC too)", typ)}
	}
	cm, err := newCMID(ps)
	if err != nil {
		return nil, err
	}
	if err := rdmaBindAddr(cm.id, addr); err != nil {
		_ = cm.destroy()
		return nil, err
	}
	if err := rdmaListen(cm.id, 8); err != nil {
		_ = cm.destroy()
		return nil, err
	}
	l := &Listener{cm: cm, ps: ps, typ: typ}
	l.addr, _ = rdmaAddrs(cm.id)
	l.device, l.port = idDevice(cm.id)
	l.cleanup = addCleanup(l, cm)
	return l, nil
}

// Addr returns the address and port listened on.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Device returns the RDMA device and port the listening address is on, or
// "" when listening on the unspecified address.
func (l *Listener) Device() (string, uint8) { return l.device, l.port }

// Close stops listening (rdma_destroy_id) and refuses requests not yet
// accepted; connections already accepted stay up. An Accept in progress
// returns an error matching os.ErrClosed. Idempotent and nil-safe.
func (l *Listener) Close() error {
	if l == nil {
		return nil
	}
	l.closing.Store(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cm == nil {
		return nil
	}
	l.cleanup.Stop()
	err := l.cm.destroy()
	l.cm = nil
	return err
}

// Accept waits for the next connection request until ctx's deadline
// (DefaultTimeout without one), connects cfg.QP to the requester (INIT,
// RTR, RTS with rdma_cm's attributes), accepts with cfg.Local as private
// data and, for RC, waits for the connection to be established. A request
// that cannot be served (another device, not from rdmabench, without
// cfg.Expect's cookie) is rejected with the reason and the wait goes on;
// if none is accepted by the deadline, the error counts them and gives
// the last one's reason.
func (l *Listener) Accept(ctx context.Context, cfg Config) (*Conn, error) {
	const op = "rdma_accept"
	ps, err := cfg.portSpace(op)
	if err != nil {
		return nil, err
	}
	if ps != l.ps {
		return nil, &Error{Op: op, Err: syscall.EINVAL, Detail: fmt.Sprintf("%v QP on a listener for %v", cfg.QP.Type(), l.typ)}
	}
	deadline := deadlineOf(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cm == nil {
		return nil, &Error{Op: op, Err: os.ErrClosed}
	}
	refused := 0
	var lastRefused error
	for {
		ev, err := l.cm.next(ctx, deadline, l.closing.Load, "a connection request on "+l.addr.String())
		if err != nil {
			if refused > 0 {
				err = &refusedError{wait: err, n: refused, last: lastRefused}
			}
			return nil, err
		}
		switch ev.typ {
		case evConnectRequest:
			c, err, bad := l.accept(ctx, deadline, ev, cfg)
			if bad {
				refused++
				lastRefused = err
				continue
			}
			return c, err
		case evDeviceRemoval:
			return nil, eventErr("listening on "+l.addr.String(), ev)
		}
		// Anything else concerns no connection of ours.
	}
}

// accept serves one connection request. bad says the request itself was
// refused (the QP is untouched, the Listener waits on); otherwise err is
// a failure to connect.
func (l *Listener) accept(ctx context.Context, deadline time.Time, ev event, cfg Config) (_ *Conn, _ error, bad bool) {
	start := time.Now()
	cm, err := adoptRequest(ev.id)
	if err != nil {
		return nil, err, false
	}
	c := &Conn{cm: cm, qp: cfg.QP}
	c.local, c.peer = rdmaAddrs(cm.id)
	op := "connection request from " + c.peer.String()
	refuseRequest := func(err error, why string) (*Conn, error, bool) {
		_ = rdmaReject(cm.id, rejectData(why))
		_ = cm.destroy()
		return nil, err, true
	}
	if c.device, c.port, err = checkDevice(op, cm.id, cfg.QP, c.local.Addr()); err != nil {
		return refuseRequest(err, fmt.Sprintf("%v is on %s, the peer's QP on another device", c.local.Addr(), c.device))
	}
	peer, err := unmarshalPeerInfo(ev.private)
	if err != nil {
		return refuseRequest(&Error{Op: op, Err: syscall.EPROTO, Detail: err.Error()}, "bad private data: "+err.Error())
	}
	if cfg.Expect != 0 && peer.Cookie != cfg.Expect {
		return refuseRequest(&Error{Op: op, Err: syscall.EACCES, Detail: "not the expected client: its request lacks the session's cookie"},
			"not the expected client (no session cookie)")
	}
	c.remote = peer
	refuse := func(err error, why string) (*Conn, error, bool) {
		_ = rdmaReject(cm.id, rejectData(why))
		_ = cm.destroy()
		return nil, err, false
	}
	sgid, _ := idGIDs(cm.id)
	local := cfg.Local
	local.QPN, local.GID = cfg.QP.Num(), sgid
	if l.typ == verbs.UD {
		local.QKey = cfg.qkey()
		if err := udReady(cm.id, cfg.QP, cfg.QKey); err != nil {
			return refuse(err, "cannot ready the UD QP")
		}
		idx, err := gidIndex(cfg.QP.PD().Context(), c.port, sgid)
		if err != nil {
			return refuse(err, "no source GID")
		}
		pa, err := cfg.QP.PD().Context().QueryPort(c.port)
		if err != nil {
			return refuse(err, "cannot query the port")
		}
		attr := udAH(c.port, pa.LinkLayer != verbs.LinkLayerEthernet, peer, idx)
		attr.TrafficClass = cfg.TOS
		c.ah, err = cfg.QP.PD().CreateAH(attr)
		if err != nil {
			return refuse(err, "cannot create an address handle")
		}
	} else if err := toRTS(cm.id, cfg.QP, cfg.access(), cfg.ResponderResources, cfg.InitiatorDepth, mtuOf(&c.mtu, cfg.MTU)); err != nil {
		return refuse(err, "cannot connect the QP")
	}
	fail := func(err error) (*Conn, error, bool) {
		if c.ah != nil {
			_ = c.ah.Close()
		}
		_ = cm.destroy()
		return nil, err, false
	}
	if err := rdmaAccept(cm.id, cfg.QP.Num(), local.marshal(), cfg.ResponderResources, cfg.InitiatorDepth); err != nil {
		return fail(err)
	}
	if l.typ == verbs.RC {
		c.connected = true
		ev, err := cm.next(ctx, deadline, nil, "RDMA_CM_EVENT_ESTABLISHED from "+c.peer.String())
		if err != nil {
			return fail(err)
		}
		if ev.typ != evEstablished {
			return fail(eventErr(op, ev))
		}
		// iWARP: the kernel moved the QP to RTS on its own (see iwarp.go).
		if err := syncState(cfg.QP); err != nil {
			return fail(err)
		}
	}
	c.setup = time.Since(start)
	c.cleanup = addCleanup(c, cm)
	return c, nil, false
}

// refusedError is an Accept that ended (deadline, close, cancel) after
// refusing requests: it matches both the wait's end and the last
// refusal's reason (errors.Is(err, syscall.EPROTO) for a foreign client).
type refusedError struct {
	wait error
	n    int
	last error
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("%v (refused %d connection requests meanwhile; the last: %v)", e.wait, e.n, e.last)
}

func (e *refusedError) Unwrap() []error { return []error{e.wait, e.last} }
