package rdmacm

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
	"github.com/rdmabench/rdmabench/verbs"
)

// Config is one side's part of a connection.
type Config struct {
	// QP is the queue pair to connect, in RESET or INIT (post receives in
	// INIT before connecting if the peer may send at once; UD drops a
	// message that finds no receive). It must be created on a PD of a
	// verbs.Context opened on the RDMA device the address is on. RC or UD:
	// librdmacm has no UC port space, and perftest -R refuses UC too.
	QP *verbs.QP
	// Local is what the peer learns about this side's buffer; QPN, QKey
	// and GID are filled in by the package.
	Local PeerInfo
	// Access replaces the remote access rdma_cm sets on the QP at INIT
	// (RC); 0 keeps rdma_cm's (remote write, plus read and atomics when the
	// connection has responder resources).
	Access verbs.Access
	// MTU caps the path MTU rdma_cm chose for RC (the smaller wins); 0
	// keeps it. Conn.PathMTU says what was set.
	MTU verbs.MTU
	// QKey replaces, for UD, the Q_Key rdma_cm gives the QP
	// (RDMA_UDP_QKEY, 0x01234567); the peer learns it from PeerInfo. 0
	// keeps rdma_cm's.
	QKey uint32
	// Expect, when not 0, is the Cookie an Accept requires in the
	// requester's PeerInfo: any other request is refused and the wait
	// goes on. Dial sends Local.Cookie.
	Expect uint64
	// ResponderResources and InitiatorDepth are the RDMA READ and atomic
	// operations outstanding as target and as initiator; 0 means 1.
	ResponderResources, InitiatorDepth uint8
	// TOS is the traffic class of the connection's packets (on RoCE v2 the
	// IP header's TOS byte); 0 keeps rdma_cm's default. Dial sets it with
	// rdma_set_option (RDMA_OPTION_ID_TOS) before the route is resolved,
	// and an RC acceptor's path follows the request's; a UD address
	// handle is given it on both sides. librdmacm has no option for the
	// flow label, service level or P_Key: those are the route's.
	TOS uint8
}

// portSpace checks cfg and returns the port space of its QP's transport.
func (cfg *Config) portSpace(op string) (portSpace, error) {
	if cfg.QP == nil {
		return 0, &Error{Op: op, Err: syscall.EINVAL, Detail: "Config.QP is nil"}
	}
	if st := cfg.QP.State(); st != verbs.QPReset && st != verbs.QPInit {
		return 0, &Error{Op: op, Err: syscall.EINVAL, Detail: fmt.Sprintf("QP %#x is in %v; rdma_cm connects a QP in RESET or INIT", cfg.QP.Num(), st)}
	}
	if cfg.ResponderResources == 0 {
		cfg.ResponderResources = 1
	}
	if cfg.InitiatorDepth == 0 {
		cfg.InitiatorDepth = 1
	}
	switch cfg.QP.Type() {
	case verbs.RC:
		return psTCP, nil
	case verbs.UD:
		return psUDP, nil
	}
	return 0, &Error{Op: op, Err: errors.ErrUnsupported,
		Detail: fmt.Sprintf("%v over rdma_cm: librdmacm connects RC and UD only (perftest -R refuses UC too); exchange endpoint info over TCP instead", cfg.QP.Type())}
}

// qkey returns the Q_Key the QP gets.
func (cfg *Config) qkey() uint32 {
	if cfg.QKey == 0 {
		return udpQKey
	}
	return cfg.QKey
}

func (cfg *Config) access() int {
	if cfg.Access == 0 {
		return -1
	}
	return int(cfg.Access)
}

// Conn is a connection made by rdma_cm: the cm_id that made it, and what
// the peer sent. It does not own the QP, which is in RTS once Dial or
// Accept returns.
type Conn struct {
	cm      *cmID
	cleanup runtime.Cleanup
	qp      *verbs.QP
	remote  PeerInfo
	ah      *verbs.AH
	local   netip.AddrPort
	peer    netip.AddrPort
	device  string
	port    uint8
	setup   time.Duration
	mtu     verbs.MTU
	// connected is set for RC, whose Close sends a disconnect request.
	connected bool
}

// Remote returns what the peer sent: its buffer, QP number and, for UD,
// its Q_Key.
func (c *Conn) Remote() PeerInfo { return c.remote }

// AH returns the address handle to the peer's UD QP, nil for RC. It
// belongs to the Conn and is closed by Close.
func (c *Conn) AH() *verbs.AH { return c.ah }

// LocalAddr returns this side's IP address and port.
func (c *Conn) LocalAddr() netip.AddrPort { return c.local }

// RemoteAddr returns the peer's IP address and port.
func (c *Conn) RemoteAddr() netip.AddrPort { return c.peer }

// Device returns the RDMA device and port the connection uses.
func (c *Conn) Device() (string, uint8) { return c.device, c.port }

// PathMTU returns the path MTU the RC QP was given (rdma_cm's, or
// Config.MTU if smaller); 0 for UD, whose messages the port's MTU caps.
func (c *Conn) PathMTU() verbs.MTU { return c.mtu }

// SetupTime returns how long Dial or Accept took, from the first rdma_cm
// call (Accept: from the connection request) to the QP in RTS.
func (c *Conn) SetupTime() time.Duration { return c.setup }

// Close disconnects (rdma_disconnect, which leaves a QP not created by
// rdma_cm as it is), destroys the cm_id and its event channel, and closes
// the UD address handle. Close it before the QP's PD. Idempotent and
// nil-safe.
func (c *Conn) Close() error {
	if c == nil || c.cm == nil {
		return nil
	}
	var errs []error
	if c.ah != nil {
		errs = append(errs, c.ah.Close())
	}
	c.cm.mu.Lock()
	id := c.cm.id
	c.cm.mu.Unlock()
	if id != nil && c.connected {
		_ = rdmaDisconnect(id) // the peer may have gone first: nothing to undo
	}
	c.cleanup.Stop()
	errs = append(errs, c.cm.destroy())
	return errors.Join(errs...)
}

// checkDevice fails unless the id is bound to the device and port of qp.
func checkDevice(op string, id unsafe.Pointer, qp *verbs.QP, addr netip.Addr) (string, uint8, error) {
	name, port := idDevice(id)
	want := qp.PD().Context().Name()
	if name != want {
		return name, port, &Error{Op: op, Err: syscall.EXDEV,
			Detail: fmt.Sprintf("%v is on RDMA device %q but the QP is on %q: open %q for this address, or use an address of %q", addr, name, want, name, want)}
	}
	return name, port, nil
}

// toRTS moves a connected QP through INIT, RTR and RTS with the attributes
// rdma_cm gives (rdma_init_qp_attr); rr and depth > 0 replace the read
// depths, as librdmacm does on the passive side.
// mtu caps the path MTU and returns the one set.
func toRTS(id unsafe.Pointer, qp *verbs.QP, access int, rr, depth uint8, mtu *verbs.MTU) error {
	p := rdmacore.Pointer(qp)
	if p == nil {
		return &Error{Op: "connect QP", Err: syscall.EBADF, Detail: "the QP is closed"}
	}
	err := rdmaInitQPAttrModify(id, p, verbs.QPInit, access, 0, 0, nil)
	if err == nil {
		err = rdmaInitQPAttrModify(id, p, verbs.QPRTR, -1, rr, 0, mtu)
	}
	if err == nil {
		err = rdmaInitQPAttrModify(id, p, verbs.QPRTS, -1, depth, 0, nil)
	}
	runtime.KeepAlive(qp)
	if err != nil {
		return err
	}
	return syncState(qp)
}

// toInit moves a QP to INIT with rdma_cm's attributes (access >= 0
// replaces its access flags): an iWARP QP's only step before connecting.
func toInit(id unsafe.Pointer, qp *verbs.QP, access int) error {
	p := rdmacore.Pointer(qp)
	if p == nil {
		return &Error{Op: "connect QP", Err: syscall.EBADF, Detail: "the QP is closed"}
	}
	err := rdmaInitQPAttrModify(id, p, verbs.QPInit, access, 0, 0, nil)
	runtime.KeepAlive(qp)
	if err != nil {
		return err
	}
	return syncState(qp)
}

// udReady moves a UD QP to RTS: INIT with rdma_cm's port, P_Key and Q_Key
// (qkey > 0 replaces it), then RTR and RTS, which for UD need no peer
// (librdmacm's own sequence).
func udReady(id unsafe.Pointer, qp *verbs.QP, qkey uint32) error {
	p := rdmacore.Pointer(qp)
	if p == nil {
		return &Error{Op: "connect QP", Err: syscall.EBADF, Detail: "the QP is closed"}
	}
	err := rdmaInitQPAttrModify(id, p, verbs.QPInit, -1, 0, qkey, nil)
	runtime.KeepAlive(qp)
	if err != nil {
		return err
	}
	if err := syncState(qp); err != nil {
		return err
	}
	if err := qp.ToRTR(verbs.RTRAttr{}); err != nil {
		return err
	}
	return qp.ToRTS(verbs.RTSAttr{})
}

// mtuOf sets *dst to the cap and returns dst, for toRTS to fill in.
func mtuOf(dst *verbs.MTU, cap verbs.MTU) *verbs.MTU {
	*dst = cap
	return dst
}

// syncState tells verbs the state the QP was moved to behind its back.
func syncState(qp *verbs.QP) error {
	_, err := qp.QueryState()
	return err
}

// eventErr describes an event that is not the one awaited.
func eventErr(op string, ev event) error {
	e := &Error{Op: op + ": " + ev.typ.String()}
	switch ev.typ {
	case evRejected:
		e.Err = syscall.ECONNREFUSED
		switch ev.status {
		case 8: // IB_CM_REJ_INVALID_SERVICE_ID
			e.Detail = "nobody listens on that port (CM reject reason 8, invalid service ID)"
		case 28: // IB_CM_REJ_CONSUMER_DEFINED
			e.Detail = "refused by the peer"
		default:
			e.Detail = fmt.Sprintf("CM reject reason %d", ev.status)
		}
		if why := rejectReason(ev.private); why != "" {
			e.Detail += ": " + why
		}
	case evUnreachable:
		e.Err = syscall.EHOSTUNREACH
		if ev.status == -int(syscall.ETIMEDOUT) {
			e.Err = syscall.ETIMEDOUT
		}
		e.Detail = fmt.Sprintf("the peer's CM did not answer (status %d)", ev.status)
	default:
		if ev.status < 0 {
			e.Err = syscall.Errno(-ev.status)
		} else {
			e.Err = syscall.EPROTO
			e.Detail = fmt.Sprintf("unexpected event, status %d", ev.status)
		}
	}
	return e
}

// gidIndex finds gid in the port's GID table, preferring a RoCE v2 entry
// (rdma_cm's default GID type) among equal GIDs.
func gidIndex(vctx *verbs.Context, port uint8, gid [16]byte) (int, error) {
	gids, err := vctx.GIDs(port, 0)
	if err != nil {
		return 0, err
	}
	best := -1
	for _, g := range gids {
		if g.Raw == gid && (best < 0 || g.Type == verbs.GIDTypeRoCEv2) {
			best = g.Index
		}
	}
	if best >= 0 {
		return best, nil
	}
	return 0, &Error{Op: "find source GID", Err: syscall.ENOENT, Detail: fmt.Sprintf("%v not in the GID table of %s port %d", gidAddr(gid), vctx.Name(), port)}
}

// DeviceAddr returns the IP address of an RDMA device's port, the address
// to Listen on or Dial from: on RoCE the one its best GID (verbs.BestGID,
// RoCE v2 over IPv4 first) carries; on InfiniBand, whose GIDs are no IP
// addresses, the address of the port's IPoIB interface (ib0), as perftest
// -R resolves it; on iWARP, whose GIDs are MAC addresses, the address
// rdma_cm binds to the device (iwarpAddr). It fails on a RoCE port with only link-local GIDs and
// on an InfiniBand port whose IPoIB interface has no address.
func DeviceAddr(vctx *verbs.Context, port uint8) (netip.Addr, error) {
	op := fmt.Sprintf("IP address of %s port %d", vctx.Name(), port)
	if vctx.NodeType() == verbs.NodeRNIC {
		return iwarpAddr(op, vctx.Name(), port, hostAddrs())
	}
	g, err := vctx.BestGID(port)
	if err != nil {
		return netip.Addr{}, err
	}
	if g.Type == verbs.GIDTypeIB {
		return ipoibAddr(op, os.DirFS("/"), vctx.Name(), port, interfaceAddrs)
	}
	if g.IsLinkLocal() {
		return netip.Addr{}, &Error{Op: op, Err: syscall.EADDRNOTAVAIL,
			Detail: fmt.Sprintf("best GID %v is not an IP address: give the network device behind %s an IP address", g, vctx.Name())}
	}
	return gidAddr(g.Raw), nil
}

// ipoibAddr returns the address of an InfiniBand port's IPoIB interface.
func ipoibAddr(op string, fsys fs.FS, dev string, port uint8, addrsOf func(string) []netip.Addr) (netip.Addr, error) {
	names := ipoibNetdevs(fsys, dev, port)
	if len(names) == 0 {
		return netip.Addr{}, &Error{Op: op, Err: syscall.EADDRNOTAVAIL,
			Detail: fmt.Sprintf("%s port %d is InfiniBand and has no IPoIB interface, which rdma_cm needs for an address: load ib_ipoib and give its interface (ib0) an IP address", dev, port)}
	}
	for _, n := range names {
		if a, ok := pickAddr(addrsOf(n)); ok {
			return a, nil
		}
	}
	return netip.Addr{}, &Error{Op: op, Err: syscall.EADDRNOTAVAIL,
		Detail: fmt.Sprintf("%s port %d is InfiniBand; its IPoIB interface %s has no IP address, which rdma_cm needs: ip addr add ADDR/PREFIX dev %s", dev, port, strings.Join(names, ", "), names[0])}
}
