package verbs

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// SGE is a scatter/gather entry (struct ibv_sge): Len bytes at Addr in the
// memory region whose local key is LKey.
type SGE struct {
	Addr uint64
	Len  uint32
	LKey uint32
}

// SendWR is one send work request (struct ibv_send_wr with one SGE).
type SendWR struct {
	ID    uint64 // returned as WorkCompletion.WRID
	Op    Opcode
	Local SGE // the data to send or write, or where READ and atomics land
	// RemoteAddr and RKey address the peer's memory for RDMA and atomics.
	RemoteAddr uint64
	RKey       uint32
	Imm        uint32 // immediate data for OpWriteImm and OpSendImm, in host byte order
	// CompareAdd is the value to add (fetch and add) or to compare with
	// (compare and swap); Swap is the value swapped in.
	CompareAdd, Swap uint64
	Flags            SendFlags
	// AH, RemoteQPN and RemoteQKey address the destination of a UD send.
	AH         *AH
	RemoteQPN  uint32
	RemoteQKey uint32
}

// QPConfig describes a queue pair to create (struct ibv_qp_init_attr).
type QPConfig struct {
	Type           QPType
	SendCQ, RecvCQ *CQ // RecvCQ nil means SendCQ
	// Queue sizes: zero work request counts mean 64, zero SGE counts 1.
	MaxSendWR, MaxRecvWR   uint32
	MaxSendSGE, MaxRecvSGE uint32
	MaxInlineData          uint32
	// SignalAll makes every send generate a completion, whatever its flags.
	SignalAll bool
}

type qpCaps struct {
	MaxSendWR, MaxRecvWR, MaxSendSGE, MaxRecvSGE, MaxInlineData uint32
}

type qpCreate struct {
	typ            QPType
	sendCQ, recvCQ unsafe.Pointer
	caps           qpCaps
	sigAll         bool
}

// QP is a queue pair (struct ibv_qp). Its state, as last set through this
// package, is checked before each post.
type QP struct {
	object
	state  QPState
	typ    QPType
	num    uint32
	port   uint8
	caps   qpCaps
	pd     *PD
	sendCQ *CQ
	recvCQ *CQ
}

// CreateQP creates a queue pair in the RESET state. Equivalent to
// ibv_create_qp.
func (pd *PD) CreateQP(cfg QPConfig) (*QP, error) {
	const op = "ibv_create_qp"
	p, err := pd.ptrOr(op)
	if err != nil {
		return nil, err
	}
	switch cfg.Type {
	case RC, UC, UD:
	default:
		return nil, &Error{Op: op, Err: syscall.EINVAL, Detail: fmt.Sprintf("unsupported QP type %v", cfg.Type)}
	}
	if cfg.SendCQ == nil {
		return nil, &Error{Op: op, Err: syscall.EINVAL, Detail: "QPConfig.SendCQ is nil"}
	}
	if cfg.RecvCQ == nil {
		cfg.RecvCQ = cfg.SendCQ
	}
	c := qpCreate{typ: cfg.Type, sigAll: cfg.SignalAll, caps: qpCaps{
		MaxSendWR: cfg.MaxSendWR, MaxRecvWR: cfg.MaxRecvWR,
		MaxSendSGE: cfg.MaxSendSGE, MaxRecvSGE: cfg.MaxRecvSGE,
		MaxInlineData: cfg.MaxInlineData,
	}}
	for _, v := range []*uint32{&c.caps.MaxSendWR, &c.caps.MaxRecvWR} {
		if *v == 0 {
			*v = 64
		}
	}
	for _, v := range []*uint32{&c.caps.MaxSendSGE, &c.caps.MaxRecvSGE} {
		if *v == 0 {
			*v = 1
		}
	}
	if c.sendCQ = cfg.SendCQ.live(); c.sendCQ == nil {
		return nil, errClosed(op + ": send CQ")
	}
	if c.recvCQ = cfg.RecvCQ.live(); c.recvCQ == nil {
		return nil, errClosed(op + ": receive CQ")
	}
	parents := []*object{&pd.object, &cfg.SendCQ.object}
	if cfg.RecvCQ != cfg.SendCQ {
		parents = append(parents, &cfg.RecvCQ.object)
	}
	if err := addChildren(op, parents...); err != nil {
		return nil, err
	}
	qpp, num, caps, err := ibvCreateQP(p, &c)
	runtime.KeepAlive(cfg.SendCQ)
	runtime.KeepAlive(cfg.RecvCQ)
	if err != nil {
		childrenGone(parents...)
		err = explainCreateQP(pd.ctx.name, cfg.Type, c.caps, err, func(caps qpCaps) error {
			t := c
			t.caps = caps
			q, _, _, terr := ibvCreateQP(p, &t)
			if terr == nil {
				terr = ibvDestroyQP(q)
			}
			runtime.KeepAlive(cfg.SendCQ)
			runtime.KeepAlive(cfg.RecvCQ)
			return terr
		}, func() (int, error) { return pd.ctx.MaxInline(cfg.Type) })
		return nil, err
	}
	qp := &QP{pd: pd, sendCQ: cfg.SendCQ, recvCQ: cfg.RecvCQ, typ: cfg.Type, num: num, caps: caps}
	track(qp, &qp.object, kindQP, qpp, ibvDestroyQP, parents...)
	return qp, nil
}

// Num returns the QP number, which the peer needs to connect.
func (qp *QP) Num() uint32 { return qp.num }

// Type returns the QP's transport.
func (qp *QP) Type() QPType { return qp.typ }

// State returns the state the QP was last moved to through this package.
// The device may have moved it to ERR since (after an error completion).
func (qp *QP) State() QPState { return qp.state }

// QueryState asks the device for the QP's current state (ibv_query_qp) and
// makes it the tracked state: after an error completion an RC QP is in ERR.
func (qp *QP) QueryState() (QPState, error) {
	p := qp.live()
	if p == nil {
		return 0, errClosed("ibv_query_qp")
	}
	st, err := ibvQueryQPState(p)
	runtime.KeepAlive(qp)
	if err != nil {
		return 0, err
	}
	qp.state = st
	return st, nil
}

// MaxInlineData returns the inline size the device granted at creation.
func (qp *QP) MaxInlineData() uint32 { return qp.caps.MaxInlineData }

// PD returns the protection domain the QP was created in.
func (qp *QP) PD() *PD { return qp.pd }

// Close destroys the QP (ibv_destroy_qp). Idempotent and nil-safe.
func (qp *QP) Close() error {
	if qp == nil {
		return nil
	}
	if err := qp.close("ibv_destroy_qp", "children"); err != nil {
		return err
	}
	qp.state = QPReset
	return nil
}

// Attribute mask bits (enum ibv_qp_attr_mask).
const (
	maskState           = 1 << 0
	maskAccessFlags     = 1 << 3
	maskPKeyIndex       = 1 << 4
	maskPort            = 1 << 5
	maskQKey            = 1 << 6
	maskAV              = 1 << 7
	maskPathMTU         = 1 << 8
	maskTimeout         = 1 << 9
	maskRetryCnt        = 1 << 10
	maskRNRRetry        = 1 << 11
	maskRQPSN           = 1 << 12
	maskMaxQPRdAtomic   = 1 << 13
	maskMinRNRTimer     = 1 << 15
	maskSQPSN           = 1 << 16
	maskMaxDestRdAtomic = 1 << 17
	maskDestQPN         = 1 << 20
)

// qpModify is a struct ibv_qp_attr and its mask in Go form.
type qpModify struct {
	mask                                     uint32
	state                                    QPState
	pkeyIndex                                uint16
	port                                     uint8
	access                                   Access
	qkey                                     uint32
	mtu                                      MTU
	destQPN, rqPSN, sqPSN                    uint32
	maxDestRdAtomic, minRNRTimer             uint8
	timeout, retryCnt, rnrRetry, maxRdAtomic uint8
	ah                                       ahFields
}

func (qp *QP) modify(m *qpModify, transition string) error {
	p := qp.live()
	if p == nil {
		return errClosed("ibv_modify_qp " + transition)
	}
	err := ibvModifyQP(p, m)
	runtime.KeepAlive(qp)
	if err != nil {
		e := err.(*Error)
		e.Op = fmt.Sprintf("ibv_modify_qp %s (%v QP %#x)", transition, qp.typ, qp.num)
		return e
	}
	qp.state = m.state
	return nil
}

// InitAttr are the attributes of the RESET -> INIT transition.
type InitAttr struct {
	Port      uint8 // 0 means 1
	PKeyIndex uint16
	Access    Access // remote access the QP allows (RC, UC)
	QKey      uint32 // UD only
}

// ToInit moves the QP from RESET to INIT (ibv_modify_qp).
func (qp *QP) ToInit(a InitAttr) error {
	if a.Port == 0 {
		a.Port = 1
	}
	m := qp.initModify(a)
	if err := qp.modify(&m, "RESET->INIT"); err != nil {
		return err
	}
	qp.port = a.Port
	return nil
}

// initModify is the modification ToInit makes.
func (qp *QP) initModify(a InitAttr) qpModify {
	m := qpModify{
		mask:      maskState | maskPKeyIndex | maskPort,
		state:     QPInit,
		pkeyIndex: a.PKeyIndex,
		port:      a.Port,
	}
	switch qp.typ {
	case UD:
		m.mask |= maskQKey
		m.qkey = a.QKey
	case UC:
		m.mask |= maskAccessFlags
		m.access = a.Access & (AccessLocalWrite | AccessRemoteWrite)
	default:
		m.mask |= maskAccessFlags
		m.access = a.Access
	}
	return m
}

// RTRAttr are the attributes of the INIT -> RTR transition: the remote end
// of a connected QP. A UD QP needs none of them.
type RTRAttr struct {
	Port    uint8 // 0 means the port given to ToInit
	MTU     MTU   // 0 means the port's active MTU
	DestQPN uint32
	RQPSN   uint32 // the peer's initial send PSN
	DLID    uint16 // InfiniBand only
	// DGID is the peer's GID (RoCE always needs one); GIDIndex is the local
	// GID index to send from. A GRH is used when UseGRH is set or DGID is
	// not zero.
	DGID     [16]byte
	GIDIndex int
	UseGRH   bool
	HopLimit uint8 // 0 means 64
	// TrafficClass and FlowLabel go in the GRH (on RoCE v2 the IP
	// header's TOS byte and the IPv6 flow label); without a GRH they are
	// not sent.
	TrafficClass    uint8
	FlowLabel       uint32 // 20 bits
	SL              uint8
	MaxDestRdAtomic uint8 // RC: 0 means 1
	MinRNRTimer     uint8 // RC: 0 means 12 (0.64 ms)
}

// ToRTR moves the QP from INIT to RTR, ready to receive (ibv_modify_qp).
func (qp *QP) ToRTR(a RTRAttr) error {
	m, err := qp.rtrModify(a)
	if err != nil {
		return err
	}
	return qp.modify(&m, "INIT->RTR")
}

// rtrModify is the modification ToRTR makes (the port's MTU queried when
// a.MTU is 0).
func (qp *QP) rtrModify(a RTRAttr) (qpModify, error) {
	m := qpModify{mask: maskState, state: QPRTR}
	if qp.typ != UD {
		if a.Port == 0 {
			a.Port = qp.port
		}
		if a.MTU == 0 {
			pa, err := qp.pd.ctx.QueryPort(a.Port)
			if err != nil {
				return m, err
			}
			a.MTU = pa.ActiveMTU
		}
		m.mask |= maskAV | maskPathMTU | maskDestQPN | maskRQPSN
		m.mtu = a.MTU
		m.destQPN = a.DestQPN
		m.rqPSN = a.RQPSN & 0xffffff
		m.ah = ahFields{port: a.Port, dlid: a.DLID, sl: a.SL, dgid: a.DGID, global: a.UseGRH, sgidIndex: a.GIDIndex, hopLimit: a.HopLimit,
			trafficClass: a.TrafficClass, flowLabel: a.FlowLabel}
		m.ah.setDefaults()
	}
	if qp.typ == RC {
		m.mask |= maskMaxDestRdAtomic | maskMinRNRTimer
		m.maxDestRdAtomic = orDefault(a.MaxDestRdAtomic, 1)
		m.minRNRTimer = orDefault(a.MinRNRTimer, 12)
	}
	return m, nil
}

// RTSAttr are the attributes of the RTR -> RTS transition.
type RTSAttr struct {
	SQPSN       uint32 // this side's initial send PSN
	Timeout     uint8  // RC: 0 means 14 (4.096 us * 2^14 = 67 ms)
	RetryCnt    uint8  // RC: 0 means 7
	RNRRetry    uint8  // RC: 0 means 7 (retry for ever)
	MaxRdAtomic uint8  // RC: 0 means 1
}

// ToRTS moves the QP from RTR to RTS, ready to send (ibv_modify_qp).
func (qp *QP) ToRTS(a RTSAttr) error {
	m := qpModify{mask: maskState | maskSQPSN, state: QPRTS, sqPSN: a.SQPSN & 0xffffff}
	if qp.typ == RC {
		m.mask |= maskTimeout | maskRetryCnt | maskRNRRetry | maskMaxQPRdAtomic
		m.timeout = orDefault(a.Timeout, 14)
		m.retryCnt = orDefault(a.RetryCnt, 7)
		m.rnrRetry = orDefault(a.RNRRetry, 7)
		m.maxRdAtomic = orDefault(a.MaxRdAtomic, 1)
	}
	return qp.modify(&m, "RTR->RTS")
}

func orDefault(v, def uint8) uint8 {
	if v == 0 {
		return def
	}
	return v
}

// PostSend posts one send work request (ibv_post_send). It is one cgo call
// and allocates nothing. The QP must be in RTS: otherwise the error wraps
// ErrQPState. A failure returned by ibv_post_send carries its errno (ENOMEM
// when the send queue is full).
func (qp *QP) PostSend(wr *SendWR) error {
	if qp.state != QPRTS || qp.ptr == nil {
		return qp.stateErr("ibv_post_send", "RTS")
	}
	var ah unsafe.Pointer
	if wr.AH != nil {
		if ah = wr.AH.ptr; ah == nil {
			return errClosed("ibv_post_send: address handle")
		}
	}
	rc := ibvPostSend(qp.ptr, wr, ah)
	runtime.KeepAlive(qp)
	runtime.KeepAlive(wr.AH)
	if rc != 0 {
		return errRet("ibv_post_send", rc)
	}
	return nil
}

// PostRecv posts one receive work request of one SGE (ibv_post_recv). It is
// one cgo call and allocates nothing. The QP must be in INIT, RTR or RTS.
// A UD receive buffer needs 40 bytes more than the message, for the GRH.
func (qp *QP) PostRecv(id uint64, sge SGE) error {
	if qp.state < QPInit || qp.state > QPRTS || qp.ptr == nil {
		return qp.stateErr("ibv_post_recv", "INIT, RTR or RTS")
	}
	rc := ibvPostRecv(qp.ptr, id, sge)
	runtime.KeepAlive(qp)
	if rc != 0 {
		return errRet("ibv_post_recv", rc)
	}
	return nil
}

func (qp *QP) stateErr(op, need string) error {
	if qp.ptr == nil {
		return errClosed(op)
	}
	return &Error{Op: op, Err: ErrQPState, Detail: fmt.Sprintf("%v QP %#x is in %v, needs %s", qp.typ, qp.num, qp.state, need)}
}
