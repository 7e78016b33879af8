package rdmalat

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/rdmabench/rdmabench/verbs"
)

// Op is the RDMA operation a latency engine measures.
type Op uint8

const (
	OpWrite Op = iota + 1 // RDMA WRITE ping-pong (ib_write_lat)
)

func (o Op) String() string {
	switch o {
	case OpWrite:
		return "write"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// access returns the remote access the operation needs on the responder's
// buffer, and no more.
func (o Op) access() verbs.Access {
	switch o {
	case OpWrite:
		return verbs.AccessLocalWrite | verbs.AccessRemoteWrite
	}
	return verbs.AccessLocalWrite
}

// EndpointConfig says how to build an Endpoint. Zero fields take defaults.
type EndpointConfig struct {
	Device   string // required
	Port     int    // 0: first active port
	GIDIndex int    // -1: best GID (perftest's choice); ignored on InfiniBand
	Op       Op     // decides the remote access granted on the buffer
	MaxSize  int    // largest message; the buffer holds two of them
	Inline   int    // largest inline message; -1: the device's limit; 0: never inline
	MTU      int    // bytes; 0: the port's active MTU
}

// Endpoint is one side of a latency measurement: an open device, a
// protection domain, a completion queue, one RC queue pair and a registered
// buffer of two halves, the first sent from and the second written into by
// the peer.
type Endpoint struct {
	cfg      EndpointConfig
	ctx      *verbs.Context
	devAttr  verbs.DeviceAttr
	port     uint8
	portAttr verbs.PortAttr
	gid      verbs.GID
	pd       *verbs.PD
	cq       *verbs.CQ
	qp       *verbs.QP
	mr       *verbs.MR
	psn      uint32
	remote   *PeerInfo
	mtu      verbs.MTU
	inline   int // requested inline limit; the QP's may be larger (rxe rounds 0 up to 16)
}

// PeerInfo is what one endpoint must know of the other to connect to it and
// write into its buffer: what perftest exchanges as
// "LID:out_reads:QPN:PSN:rkey:vaddr:SRQN:GID".
type PeerInfo struct {
	LID  uint16
	QPN  uint32
	PSN  uint32
	GID  [16]byte
	MTU  int    // bytes: the sender's port MTU (or its configured one)
	RKey uint32 // of the receive half of the buffer
	Addr uint64 // start of the receive half
	Size int    // length of the receive half
}

// NewEndpoint opens cfg.Device and builds an endpoint in the INIT state.
// Close releases everything.
func NewEndpoint(cfg EndpointConfig) (_ *Endpoint, err error) {
	if cfg.Device == "" {
		return nil, errors.New("rdmalat: no device named (set RDMABENCH_DEVICE)")
	}
	if cfg.MaxSize < 1 {
		return nil, fmt.Errorf("rdmalat: message size %d: want at least 1 byte", cfg.MaxSize)
	}
	if cfg.Op == 0 {
		cfg.Op = OpWrite
	}
	e := &Endpoint{cfg: cfg, psn: rand.Uint32() & 0xffffff}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if e.ctx, err = verbs.Open(cfg.Device); err != nil {
		return nil, err
	}
	if e.devAttr, err = e.ctx.Query(); err != nil {
		return nil, err
	}
	if e.port, e.portAttr, err = pickPort(e.ctx, e.devAttr, cfg.Port); err != nil {
		return nil, err
	}
	if e.gid, err = pickGID(e.ctx, e.port, e.portAttr, cfg.GIDIndex); err != nil {
		return nil, err
	}
	if e.mtu, err = pickMTU(e.portAttr, cfg.MTU); err != nil {
		return nil, fmt.Errorf("rdmalat: %s port %d: %w", cfg.Device, e.port, err)
	}
	if e.pd, err = e.ctx.AllocPD(); err != nil {
		return nil, err
	}
	if e.cq, err = e.ctx.CreateCQ(16, nil); err != nil {
		return nil, err
	}
	if e.mr, err = e.pd.AllocMR(2*cfg.MaxSize, cfg.Op.access()); err != nil {
		return nil, err
	}
	inline := cfg.Inline
	if inline < 0 {
		inline = e.devAttr.MaxInlineData
	}
	e.inline = inline
	if e.qp, err = e.pd.CreateQP(verbs.QPConfig{
		Type: verbs.RC, SendCQ: e.cq, RecvCQ: e.cq,
		MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1,
		MaxInlineData: uint32(inline),
	}); err != nil {
		return nil, err
	}
	if err = e.qp.ToInit(verbs.InitAttr{Port: e.port, Access: cfg.Op.access()}); err != nil {
		return nil, err
	}
	return e, nil
}

func pickPort(ctx *verbs.Context, attr verbs.DeviceAttr, want int) (uint8, verbs.PortAttr, error) {
	if want > 0 {
		if want > int(attr.PhysPortCount) { // libibverbs says only "invalid argument"
			return 0, verbs.PortAttr{}, fmt.Errorf("rdmalat: %s has ports 1..%d, not port %d", ctx.Name(), attr.PhysPortCount, want)
		}
		pa, err := ctx.QueryPort(uint8(want))
		if err != nil {
			return 0, pa, err
		}
		if pa.State != verbs.PortActive {
			return 0, pa, fmt.Errorf("rdmalat: %s port %d is %v, not ACTIVE (check the link; ibv_devinfo shows it)", ctx.Name(), want, pa.State)
		}
		return uint8(want), pa, nil
	}
	var states []string
	for p := 1; p <= int(attr.PhysPortCount); p++ {
		pa, err := ctx.QueryPort(uint8(p))
		if err != nil {
			return 0, pa, err
		}
		if pa.State == verbs.PortActive {
			return uint8(p), pa, nil
		}
		states = append(states, fmt.Sprintf("port %d %v", p, pa.State))
	}
	return 0, verbs.PortAttr{}, fmt.Errorf("rdmalat: %s has no ACTIVE port (%v): bring a link up or choose another device", ctx.Name(), states)
}

func pickGID(ctx *verbs.Context, port uint8, pa verbs.PortAttr, index int) (verbs.GID, error) {
	if index >= 0 {
		g, err := ctx.GID(port, index)
		if err != nil {
			return g, fmt.Errorf("rdmalat: %s port %d GID index %d (RDMABENCH_GID_INDEX): %w", ctx.Name(), port, index, err)
		}
		if g.IsZero() && pa.LinkLayer == verbs.LinkLayerEthernet {
			return g, fmt.Errorf("rdmalat: %s port %d GID index %d (RDMABENCH_GID_INDEX) is empty: pick a filled entry (ibv_devinfo -v lists them)", ctx.Name(), port, index)
		}
		return g, nil
	}
	gids, err := ctx.GIDs(port, 8)
	if err != nil {
		return verbs.GID{}, err
	}
	if pa.LinkLayer != verbs.LinkLayerEthernet && len(gids) > 0 {
		return gids[0], nil // InfiniBand routes by LID; GID 0 serves a GRH when one is used
	}
	g, err := verbs.BestGID(gids)
	if err != nil {
		return g, fmt.Errorf("rdmalat: %s port %d: %w (on RoCE, the netdev needs an IP address)", ctx.Name(), port, err)
	}
	return g, nil
}

func pickMTU(pa verbs.PortAttr, want int) (verbs.MTU, error) {
	if want == 0 {
		return pa.ActiveMTU, nil
	}
	m, err := verbs.ParseMTU(want)
	if err != nil {
		return 0, err
	}
	if m > pa.ActiveMTU {
		return 0, fmt.Errorf("MTU %d (RDMABENCH_MTU) is above the port's active MTU %v", want, pa.ActiveMTU)
	}
	return m, nil
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
		Addr: e.mr.Addr() + uint64(e.cfg.MaxSize),
		Size: e.cfg.MaxSize,
	}
}

// Connect moves the queue pair to RTS, connected to the remote endpoint.
// The path MTU is the smaller of the two sides' MTUs.
func (e *Endpoint) Connect(remote PeerInfo) error {
	mtu := e.mtu
	if rm, err := verbs.ParseMTU(remote.MTU); err == nil && rm < mtu {
		mtu = rm
	}
	if err := e.qp.ToRTR(verbs.RTRAttr{
		Port: e.port, MTU: mtu, DestQPN: remote.QPN, RQPSN: remote.PSN,
		DLID: remote.LID, DGID: remote.GID, GIDIndex: e.gid.Index,
		UseGRH:          e.portAttr.LinkLayer == verbs.LinkLayerEthernet || remote.GID != [16]byte{},
		MaxDestRdAtomic: 1,
	}); err != nil {
		return err
	}
	if err := e.qp.ToRTS(verbs.RTSAttr{SQPSN: e.psn, MaxRdAtomic: 1}); err != nil {
		return err
	}
	e.remote = &remote
	e.mtu = mtu
	return nil
}

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

// Close releases the endpoint's queue pair, buffer, completion queue,
// protection domain and device, in that order. It is idempotent.
func (e *Endpoint) Close() error {
	if e == nil {
		return nil
	}
	var errs []error
	// Each Close is nil-safe, so a half-built endpoint closes the same way.
	for _, c := range []interface{ Close() error }{e.qp, e.mr, e.cq, e.pd, e.ctx} {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
