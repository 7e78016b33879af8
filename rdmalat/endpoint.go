package rdmalat

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/internal/rdmacm"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// Op is the RDMA operation a latency engine measures: spec's one
// definition.
type Op = spec.Op

// Transport is the queue pair type: spec's one definition.
type Transport = spec.Transport

// The operations and transports, for other modules (internal/spec is not
// importable outside this one).
const (
	OpWrite       Op = spec.Write
	OpWriteImm    Op = spec.WriteImm
	OpRead        Op = spec.Read
	OpSend        Op = spec.Send
	OpSendImm     Op = spec.SendImm
	OpFetchAdd    Op = spec.FetchAdd
	OpCompareSwap Op = spec.CompareSwap

	RC Transport = spec.RC
	UC Transport = spec.UC
	UD Transport = spec.UD
)

// EndpointConfig says how to build an Endpoint. Zero fields take
// defaults, except Inline, a size in bytes whose zero is never inline:
// InlinePerftest is perftest's default.
type EndpointConfig struct {
	Device string // required
	Port   int    // 0: first active port
	// GIDIndex is the local GID's table index; 0 (or GIDBest) is the best
	// GID, as perftest chooses it, and GIDIndex0 the entry at index 0. An
	// explicit index on InfiniBand adds a GRH, as perftest -x does.
	GIDIndex  int
	Op        Op        // 0: write. Decides the remote access granted on the buffer
	Transport Transport // 0: RC
	// Events waits for completions on completion channels (perftest -e)
	// instead of busy-polling; every operation but write.
	Events bool
	// CM connects the queue pair through rdma_cm (perftest -R; RC and UD):
	// acceptCM (or, two-node, DialPeer) instead of Info and Connect.
	CM      bool
	MaxSize int // largest message; the buffer holds two of them
	// Inline is the largest message sent inline: InlineDevice (-1) for
	// the device's limit, InlinePerftest (-2) for perftest's default for
	// the operation capped at the device's limit, 0 for never (READ and
	// atomics never are).
	Inline int
	MTU    int // bytes; 0: the port's active MTU
	// QoS is the queue pair's traffic class, flow label, service level
	// and P_Key index (qos.go); the zero value is every default.
	QoS QoS
	// HugePages backs the buffer with reserved huge pages, THP with
	// transparent ones; ODP registers it with on-demand paging where the
	// device supports it (memory.go).
	HugePages, THP, ODP bool
	// depth is the send queue's and send CQ's depth; 0: perftest's 1 of
	// latency tests. Only the load stream (load.go) keeps more in flight.
	depth int
	// ackTimeout is the RC local ACK timeout exponent (4.096 us * 2^n);
	// 0: verbs' 14 (67 ms).
	ackTimeout uint8
	// MemNode is the NUMA node the buffer's pages are preferred on (the
	// rule of env.Place); none, the zero value: where the kernel puts them.
	MemNode env.Node
}

// Values of a GID index field besides a number: its zero is the default,
// so index 0 is named.
const (
	// GIDBest as EndpointConfig.GIDIndex picks the best GID, as perftest
	// does (RoCE v2 over IPv4 first): what 0 means too.
	GIDBest = env.GIDBest
	// GIDIndex0 as EndpointConfig.GIDIndex is the entry at index 0.
	GIDIndex0 = env.GIDIndex0
)

// Inline settings of EndpointConfig.Inline besides a size in bytes.
const (
	InlineDevice   = env.InlineDevice   // the device's limit
	InlinePerftest = env.InlinePerftest // perftest's default for the operation, at most the device's limit
)

// perftestInline is perftest's default inline size in its latency tests
// for an operation over a transport on this device (internal/perftest's
// table by vendor and part id: 220 bytes for WRITE on ConnectX, 96 on
// bnxt_re, 32 on EFA, none on devices it does not recognise such as rxe),
// at most what the device accepts on that queue pair type.
func (e *Endpoint) perftestInline() int {
	f := spec.DeviceFamily(e.devAttr.VendorID, e.devAttr.VendorPartID)
	return min(spec.DefaultInline(f, e.cfg.Op, e.cfg.Transport), e.deviceInline())
}

// deviceInline returns the largest inline size the device accepts on the
// endpoint's queue pair type (probed per type: EFA's UD takes less than its
// RC), 0 when the probe failed.
func (e *Endpoint) deviceInline() int {
	n, err := e.ctx.MaxInline(qpTypes[e.cfg.Transport])
	if err != nil {
		return 0
	}
	return n
}

// Endpoint is one side of a latency measurement: an open device, a
// protection domain, a send completion queue (and a receive one for the
// operations that receive, as perftest), completion channels for events,
// one queue pair of the configured transport, and a registered buffer of
// two halves: the first sent from (and where READs and atomics' old values
// land), the second written into or received into by the peer.
type Endpoint struct {
	cfg             EndpointConfig
	ctx             *verbs.Context
	devAttr         verbs.DeviceAttr
	port            uint8
	portAttr        verbs.PortAttr
	gid             verbs.GID
	pd              *verbs.PD
	sendCh, recvCh  *verbs.CompChannel // events only; recvCh only where the op receives
	sendCQ, recvCQ  *verbs.CQ          // recvCQ is sendCQ where the op does not receive
	qp              *verbs.QP
	mr              *verbs.MR
	ah              *verbs.AH // UD: the peer's address, once connected
	lay             layout
	rxDepth, posted int // receives kept posted, and posted now
	repostBelow     int // loops.Config.RepostBelow
	psn             uint32
	remote          *PeerInfo
	cm              *rdmacm.Conn // with CM, once connected (cm.go)
	mtu             verbs.MTU
	inline          int // requested inline limit; the QP's may be larger (rxe rounds 0 up to 16)
}

// MemNode returns the NUMA node the buffer's pages were placed on
// (EndpointConfig.MemNode).
func (e *Endpoint) MemNode() env.Node { return e.cfg.MemNode }

// remoteAccess is the access the operation needs on the responder's
// buffer and queue pair, and no more.
func remoteAccess(op spec.Op) verbs.Access {
	switch {
	case op == spec.Write || op == spec.WriteImm:
		return verbs.AccessRemoteWrite
	case op == spec.Read:
		return verbs.AccessRemoteRead
	case op.Atomic():
		return verbs.AccessRemoteAtomic
	}
	return 0 // send: the receiver posts its own buffers
}

var qpTypes = map[spec.Transport]verbs.QPType{spec.RC: verbs.RC, spec.UC: verbs.UC, spec.UD: verbs.UD}

// PeerInfo is what one endpoint must know of the other to connect to it and
// write into its buffer: what perftest exchanges as
// "LID:out_reads:QPN:PSN:rkey:vaddr:SRQN:GID". UD needs no more: the QPN
// and GID address its sends, and the Q_Key is fixed (perftest's, 0x11111111).
type PeerInfo struct {
	LID  uint16
	QPN  uint32
	PSN  uint32
	GID  [16]byte
	MTU  int    // bytes: the sender's port MTU (or its configured one)
	RKey uint32 // of the receive half of the buffer
	Addr uint64 // start of the receive half (8-byte aligned: atomics' word)
	Size int    // length of the receive half
}

// checkConfig fills in the defaults and says why cfg cannot be built.
func checkConfig(cfg *EndpointConfig) error {
	if cfg.Device == "" {
		return errors.New("rdmalat: no device named (set RDMABENCH_DEVICE)")
	}
	if cfg.Op == 0 {
		cfg.Op = spec.Write
	}
	if cfg.Transport == 0 {
		cfg.Transport = spec.RC
	}
	if err := cfg.Transport.Carries(cfg.Op); err != nil {
		return fmt.Errorf("rdmalat: %w", err)
	}
	if cfg.Events && !cfg.Op.Events() {
		return fmt.Errorf("rdmalat: events (perftest -e) with %v: its receiver polls memory and has no completion to wait for; use write_imm, or no events", cfg.Op)
	}
	if err := checkCM(*cfg); err != nil {
		return err
	}
	if err := checkQoS(*cfg); err != nil {
		return err
	}
	if cfg.MaxSize < 1 {
		return fmt.Errorf("rdmalat: message size %d: want at least 1 byte", cfg.MaxSize)
	}
	if cfg.Op.Atomic() && cfg.MaxSize < spec.AtomicSize {
		return fmt.Errorf("rdmalat: message size %d: %v moves %d bytes", cfg.MaxSize, cfg.Op, spec.AtomicSize)
	}
	return nil
}

// NewEndpoint opens cfg.Device and builds an endpoint in the INIT state.
// Close releases everything.
func NewEndpoint(cfg EndpointConfig) (_ *Endpoint, err error) {
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	e := &Endpoint{cfg: cfg, psn: rand.Uint32() & 0xffffff, lay: layoutFor(cfg.Op, cfg.Transport, cfg.MaxSize)}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if e.ctx, err = verbs.Open(cfg.Device); err != nil {
		return nil, err
	}
	if err = checkIWARP(cfg.Device, e.ctx.NodeType(), cfg); err != nil {
		return nil, err
	}
	if e.devAttr, err = e.ctx.Query(); err != nil {
		return nil, err
	}
	if cfg.Op.Atomic() && e.devAttr.AtomicCap == verbs.AtomicNone {
		return nil, fmt.Errorf("rdmalat: %s has no atomic operations (atomic_cap %v): %v cannot run there", cfg.Device, e.devAttr.AtomicCap, cfg.Op)
	}
	if e.port, e.portAttr, err = pickPort(e.ctx, e.devAttr, cfg.Port); err != nil {
		return nil, err
	}
	if err = checkPKeyIndex(cfg.Device, e.port, e.portAttr, cfg.QoS.PKeyIndex); err != nil {
		return nil, err
	}
	if e.gid, err = pickGID(e.ctx, e.port, e.portAttr, env.GIDIndexOf(cfg.GIDIndex)); err != nil {
		return nil, err
	}
	if e.mtu, err = pickMTU(e.portAttr, cfg.MTU); err != nil {
		return nil, fmt.Errorf("rdmalat: %s port %d: %w", cfg.Device, e.port, err)
	}
	if e.pd, err = e.ctx.AllocPD(); err != nil {
		return nil, err
	}
	if err = e.createCQs(); err != nil {
		return nil, err
	}
	access := initiatorAccess(cfg.Op, e.ctx.NodeType())
	if e.mr, err = e.allocBuffer(verbs.AccessLocalWrite | access); err != nil {
		return nil, err
	}
	e.inline = cfg.Inline
	switch {
	case e.inline == InlinePerftest:
		e.inline = e.perftestInline()
	case e.inline < 0:
		e.inline = e.deviceInline()
	}
	if !cfg.Op.Inline() {
		e.inline = 0 // READ and atomics move no data from the send queue
	}
	recvWR := uint32(1)
	if cfg.Op.Receives() {
		recvWR = uint32(e.rxDepth)
	}
	if e.qp, err = e.pd.CreateQP(verbs.QPConfig{
		Type: qpTypes[cfg.Transport], SendCQ: e.sendCQ, RecvCQ: e.recvCQ,
		MaxSendWR: uint32(e.sendDepth()), MaxRecvWR: recvWR, MaxSendSGE: 1, MaxRecvSGE: 1,
		MaxInlineData: uint32(e.inline),
	}); err != nil {
		if errors.Is(err, verbs.ErrInlineTooLarge) {
			return nil, fmt.Errorf("rdmalat: %w: set %s to that limit or less (0: no inline)", err, env.VarInline)
		}
		return nil, err
	}
	if err = e.qp.ToInit(verbs.InitAttr{Port: e.port, PKeyIndex: cfg.QoS.PKeyIndex, Access: access, QKey: loops.UDQKey}); err != nil {
		return nil, err
	}
	return e, nil
}

// createCQs creates the completion channels (events) and queues: one CQ
// for the operations that only send, a send and a receive CQ (each with
// its channel) for those that receive, sized for rxDepth receives.
func (e *Endpoint) createCQs() (err error) {
	recv := e.cfg.Op.Receives()
	if recv {
		e.rxDepth, e.repostBelow = loops.RecvPlan(e.cfg.Transport, e.devAttr.MaxQPWR, e.devAttr.MaxCQE)
	}
	if e.cfg.Events {
		if e.sendCh, err = e.ctx.CreateCompChannel(); err != nil {
			return err
		}
		if recv {
			if e.recvCh, err = e.ctx.CreateCompChannel(); err != nil {
				return err
			}
		}
	}
	if e.sendCQ, err = e.ctx.CreateCQ(max(sendCQDepth, e.sendDepth()), e.sendCh); err != nil {
		return err
	}
	e.recvCQ = e.sendCQ
	if recv {
		if e.recvCQ, err = e.ctx.CreateCQ(e.rxDepth, e.recvCh); err != nil {
			return err
		}
	}
	return nil
}

// Info returns what the peer needs to connect to this endpoint.
func (e *Endpoint) Info() PeerInfo {
	return PeerInfo{
		LID:  e.portAttr.LID,
		QPN:  e.qp.Num(),
		PSN:  e.psn,
		GID:  e.gid.Raw,
		MTU:  e.mtu.Bytes(),
		RKey: e.mr.RKey(),
		Addr: e.mr.Addr() + uint64(e.lay.recv),
		Size: e.cfg.MaxSize,
	}
}

// Connect moves the queue pair to RTS, connected to the remote endpoint
// (UD: ready to send to it, through an address handle made here). The
// path MTU is the smaller of the two sides' MTUs.
func (e *Endpoint) Connect(remote PeerInfo) error {
	mtu := e.mtu
	if rm, err := verbs.ParseMTU(remote.MTU); err == nil && rm < mtu {
		mtu = rm
	}
	grh := useGRH(e.portAttr.LinkLayer, env.GIDIndexOf(e.cfg.GIDIndex) >= 0, e.portAttr.LID)
	if err := checkGIDFamily(e.ctx.Name(), e.gid, remote.GID, grh); err != nil {
		return err
	}
	dgid := remote.GID
	if !grh {
		dgid = [16]byte{} // verbs adds a GRH for any non-zero DGID
	}
	initiate, accept := outstandingReads(e.devAttr)
	if err := e.qp.ToRTR(verbs.RTRAttr{
		Port: e.port, MTU: mtu, DestQPN: remote.QPN, RQPSN: remote.PSN,
		DLID: remote.LID, DGID: dgid, GIDIndex: e.gid.Index,
		UseGRH: grh, SL: e.cfg.QoS.SL, TrafficClass: e.cfg.QoS.TrafficClass, FlowLabel: e.cfg.QoS.FlowLabel,
		MaxDestRdAtomic: accept,
	}); err != nil {
		return err
	}
	if err := e.qp.ToRTS(verbs.RTSAttr{SQPSN: e.psn, MaxRdAtomic: initiate, Timeout: e.cfg.ackTimeout}); err != nil {
		return err
	}
	if e.cfg.Transport == spec.UD {
		ah, err := e.pd.CreateAH(verbs.AHAttr{
			Port: e.port, DLID: remote.LID, DGID: dgid, SGIDIndex: e.gid.Index,
			SL: e.cfg.QoS.SL, TrafficClass: e.cfg.QoS.TrafficClass, FlowLabel: e.cfg.QoS.FlowLabel,
		})
		if err != nil {
			return fmt.Errorf("rdmalat: address handle for the peer's UD QP %#x: %w", remote.QPN, err)
		}
		e.ah = ah
	}
	e.remote = &remote
	e.mtu = mtu
	return nil
}

// Op, Transport and Events return what the endpoint measures.
func (e *Endpoint) Op() Op { return e.cfg.Op }

// Transport returns the queue pair's transport.
func (e *Endpoint) Transport() Transport { return e.cfg.Transport }

// Events reports whether completions are waited for on channels.
func (e *Endpoint) Events() bool { return e.cfg.Events }

// DeviceInfo describes an endpoint's device for configuration lines.
type DeviceInfo struct {
	Name      string
	Firmware  string
	VendorID  uint32
	PartID    uint32
	LinkLayer string
	Port      int
	MTU       int // path MTU in bytes once connected, else the port's
	GIDIndex  int
	GIDType   string
	Inline    int // largest message sent inline
}

// Device describes the endpoint's device, port and GID.
func (e *Endpoint) Device() DeviceInfo {
	return DeviceInfo{
		Name: e.ctx.Name(), Firmware: e.devAttr.FirmwareVersion,
		VendorID: e.devAttr.VendorID, PartID: e.devAttr.VendorPartID,
		LinkLayer: e.portAttr.LinkLayer.String(), Port: int(e.port),
		MTU: e.mtu.Bytes(), GIDIndex: e.gid.Index, GIDType: e.gid.Type.String(),
		Inline: e.InlineMax(),
	}
}

// InlineMax returns the largest message sent inline: the smaller of the
// configured limit and what the queue pair supports. 0 means never inline.
func (e *Endpoint) InlineMax() int {
	return min(e.inline, int(e.qp.MaxInlineData()))
}

// MaxSize returns the largest message size the endpoint's buffer holds.
func (e *Endpoint) MaxSize() int { return e.cfg.MaxSize }

// Close releases the endpoint's rdma_cm connection, queue pair, address handle, buffer,
// completion queues and channels, protection domain and device, in that
// order. It is idempotent.
func (e *Endpoint) Close() error {
	if e == nil {
		return nil
	}
	errs := []error{e.closeCM()} // rdma_cm's connection goes first, its AH with it
	// Each Close is nil-safe, so a half-built endpoint closes the same way.
	closers := []interface{ Close() error }{e.qp, e.ah, e.mr, e.sendCQ}
	if e.recvCQ != e.sendCQ {
		closers = append(closers, e.recvCQ)
	}
	for _, c := range append(closers, e.sendCh, e.recvCh, e.pd, e.ctx) {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
