package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/verbs"
)

// Dial connects cfg.QP to the Listener at dst, as perftest -R's client does:
// rdma_resolve_addr, rdma_resolve_route, rdma_connect with cfg.Local as
// private data, then for RC the QP through INIT, RTR and RTS with rdma_cm's
// attributes and rdma_establish; for UD an address handle from the reply.
// src, when valid, is the local address to use (its device must be the
// QP's); else the routing table picks one. Every step waits at most until
// ctx's deadline (DefaultTimeout without one).
func Dial(ctx context.Context, src netip.Addr, dst netip.AddrPort, cfg Config) (*Conn, error) {
	const op = "rdma_connect"
	ps, err := cfg.portSpace(op)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	deadline := deadlineOf(ctx)
	cm, err := newCMID(ps)
	if err != nil {
		return nil, err
	}
	c := &Conn{cm: cm, qp: cfg.QP}
	ok := false
	defer func() {
		if !ok {
			if c.ah != nil {
				_ = c.ah.Close()
			}
			_ = cm.destroy()
		}
	}()
	await := func(what string, want eventType) (event, error) {
		ev, err := cm.next(ctx, deadline, nil, want.String()+" from "+dst.String())
		if err != nil {
			return ev, err
		}
		if ev.typ != want {
			return ev, eventErr(what, ev)
		}
		return ev, nil
	}

	if cfg.TOS != 0 {
		if err := rdmaSetTOS(cm.id, cfg.TOS); err != nil {
			return nil, err
		}
	}
	if err := resolveAddr(ctx, cm, src, dst, deadline); err != nil {
		return nil, err
	}
	c.local, c.peer = rdmaAddrs(cm.id)
	if c.device, c.port, err = checkDevice("rdma_resolve_addr "+dst.String(), cm.id, cfg.QP, c.local.Addr()); err != nil {
		return nil, err
	}
	if err := rdmaResolveRoute(cm.id, timeoutMs(deadline)); err != nil {
		return nil, err
	}
	if _, err := await("rdma_resolve_route "+dst.String(), evRouteResolved); err != nil {
		return nil, err
	}
	sgid, _ := idGIDs(cm.id)
	local := cfg.Local
	local.QPN, local.GID = cfg.QP.Num(), sgid

	if ps == psUDP {
		local.QKey = cfg.qkey()
		// On InfiniBand the listener's address handle needs our LID.
		if pa, err := cfg.QP.PD().Context().QueryPort(c.port); err == nil && pa.LinkLayer != verbs.LinkLayerEthernet {
			local.LID = pa.LID
		}
		if err := udReady(cm.id, cfg.QP, cfg.QKey); err != nil {
			return nil, err
		}
		if err := rdmaConnect(cm.id, cfg.QP.Num(), local.marshal(), 0, 0); err != nil {
			return nil, err
		}
		ev, err := await(op+" "+dst.String(), evEstablished)
		if err != nil {
			return nil, err
		}
		if c.remote, err = unmarshalPeerInfo(ev.private); err != nil {
			return nil, &Error{Op: op + " " + dst.String(), Err: syscall.EPROTO, Detail: err.Error()}
		}
		c.remote.QPN = ev.qpn // the SIDR reply's, authoritative
		if c.remote.QKey == 0 {
			c.remote.QKey = ev.qkey
		}
		ah := ev.ah
		if !ev.ahGlobal {
			ah.DGID = [16]byte{} // InfiniBand within a subnet: no GRH
		}
		ah.TrafficClass = cfg.TOS
		if c.ah, err = cfg.QP.PD().CreateAH(ah); err != nil {
			return nil, err
		}
	} else {
		// iWARP: the kernel's CM takes the QP from INIT to RTS itself and
		// answers with ESTABLISHED (see iwarp.go).
		iw := isIWARP(cfg.QP)
		want := evConnectResponse
		if iw {
			want = evEstablished
			if err := toInit(cm.id, cfg.QP, cfg.access()); err != nil {
				return nil, err
			}
		}
		if err := rdmaConnect(cm.id, cfg.QP.Num(), local.marshal(), cfg.ResponderResources, cfg.InitiatorDepth); err != nil {
			return nil, err
		}
		ev, err := await(op+" "+dst.String(), want)
		if err != nil {
			return nil, err
		}
		c.connected = iw // ESTABLISHED: Close must disconnect
		if c.remote, err = unmarshalPeerInfo(ev.private); err != nil {
			if !iw {
				_ = rdmaReject(cm.id, rejectData("bad private data: "+err.Error()))
			}
			return nil, &Error{Op: op + " " + dst.String(), Err: syscall.EPROTO, Detail: err.Error()}
		}
		if iw {
			if err := syncState(cfg.QP); err != nil {
				return nil, err
			}
		} else {
			if err := toRTS(cm.id, cfg.QP, cfg.access(), 0, 0, mtuOf(&c.mtu, cfg.MTU)); err != nil {
				_ = rdmaReject(cm.id, rejectData("cannot connect the QP"))
				return nil, err
			}
			if err := rdmaEstablish(cm.id); err != nil {
				return nil, err
			}
			c.connected = true
		}
	}
	c.setup = time.Since(start)
	c.cleanup = addCleanup(c, cm)
	ok = true
	return c, nil
}

// resolveSlice bounds one rdma_resolve_addr. The kernel's address
// resolution can miss the neighbour update of the ARP reply it waits for
// and then sit out its whole timeout: in the VM the first rxe1 -> rxe0
// resolution after boot never completed within 20 s while a second one,
// with the neighbour known, took milliseconds. Short attempts, repeated
// until the deadline, turn that into one slice's delay.
const resolveSlice = 500 * time.Millisecond

// resolveAddr runs rdma_resolve_addr until ADDR_RESOLVED, retrying an
// attempt that timed out while the deadline allows.
func resolveAddr(ctx context.Context, cm *cmID, src netip.Addr, dst netip.AddrPort, deadline time.Time) error {
	op := "rdma_resolve_addr " + dst.String()
	start := time.Now()
	for attempts := 1; ; attempts++ {
		attempt := time.Now().Add(resolveSlice)
		if attempt.After(deadline) {
			attempt = deadline
		}
		if err := rdmaResolveAddr(cm.id, src, dst, timeoutMs(attempt)); err != nil {
			return err
		}
		ev, err := cm.next(ctx, deadline, nil, "RDMA_CM_EVENT_ADDR_RESOLVED from "+dst.String())
		timedOut := errors.Is(err, os.ErrDeadlineExceeded) ||
			(err == nil && ev.typ == evAddrError && ev.status == -int(syscall.ETIMEDOUT))
		switch {
		case timedOut && time.Now().Before(deadline):
			continue
		case timedOut:
			return &Error{Op: op, Err: os.ErrDeadlineExceeded, Detail: fmt.Sprintf(
				"not resolved after %d attempts in %v: does %v answer ARP or neighbour discovery on the network of the source address?",
				attempts, time.Since(start).Round(time.Millisecond), dst.Addr())}
		case err != nil:
			return err
		case ev.typ == evAddrResolved:
			return nil
		}
		return eventErr(op, ev)
	}
}

// Loopback connects two QPs of one process through l: server's QP is
// accepted by l while client's dials l.Addr() from src (zero: any). On
// failure both sides are cleaned up and the first error is returned.
func Loopback(ctx context.Context, l *Listener, src netip.Addr, server, client Config) (srv, cli *Conn, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		c   *Conn
		err error
	}
	accepted := make(chan result, 1)
	go func() {
		c, err := l.Accept(ctx, server)
		accepted <- result{c, err}
	}()
	cli, err = Dial(ctx, src, l.Addr(), client)
	if err != nil {
		cancel() // Accept notices within pollSlice
	}
	r := <-accepted
	if err != nil || r.err != nil {
		_ = cli.Close()
		_ = r.c.Close()
		switch {
		case err == nil:
			err = r.err
		case r.err != nil && (!errors.Is(r.err, context.Canceled) || errors.As(r.err, new(*refusedError))):
			err = errors.Join(r.err, err) // the server's reason first
		}
		return nil, nil, err
	}
	return r.c, cli, nil
}
