package verbs

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"unsafe"
)

// DeviceInfo describes one RDMA device, as ibv_devices lists it.
type DeviceInfo struct {
	Name     string // "mlx5_0", "rxe0"
	GUID     GUID   // node GUID
	NodeType NodeType
}

// Devices lists the RDMA devices. Equivalent to ibv_devices
// (ibv_get_device_list). On a machine without RDMA support in the kernel it
// fails with an error matching errors.ErrUnsupported (ENOSYS).
func Devices() ([]DeviceInfo, error) {
	return ibvGetDeviceList()
}

// Context is an open RDMA device (struct ibv_context).
type Context struct {
	object
	name string
	node NodeType

	inlineMu  sync.Mutex
	maxInline map[QPType]inlineProbe
}

type inlineProbe struct {
	size int
	err  error
}

// Open opens the device called name. Equivalent to ibv_open_device. If no
// device has that name the error matches os.ErrNotExist and lists the
// devices that exist.
func Open(name string) (*Context, error) {
	p, node, err := ibvOpenDevice(name)
	if err != nil {
		return nil, err
	}
	c := &Context{name: name, node: node}
	track(c, &c.object, kindContext, p, ibvCloseDevice)
	return c, nil
}

// Name returns the device's name.
func (c *Context) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// NodeType returns the device's node type (ibv_device's node_type): NodeCA
// for InfiniBand and RoCE adapters, NodeRNIC for iWARP ones.
func (c *Context) NodeType() NodeType {
	if c == nil {
		return NodeUnknown
	}
	return c.node
}

// Close closes the device (ibv_close_device). It fails with ErrInUse while
// PDs, CQs or completion channels made from it are open. Close is idempotent
// and nil-safe.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	return c.close("ibv_close_device "+c.name, "PDs, CQs or completion channels")
}

func (c *Context) ptrOr(op string) (unsafe.Pointer, error) {
	if c == nil {
		return nil, errClosed(op)
	}
	p := c.live()
	if p == nil {
		return nil, errClosed(op + " " + c.name)
	}
	return p, nil
}

// DeviceAttr holds a device's attributes (struct ibv_device_attr).
type DeviceAttr struct {
	FirmwareVersion string
	NodeGUID        GUID
	VendorID        uint32
	VendorPartID    uint32
	HWVersion       uint32
	MaxMRSize       uint64
	MaxQP           int
	MaxQPWR         int // work requests per queue
	MaxSGE          int
	MaxCQ           int
	MaxCQE          int
	MaxMR           int
	MaxPD           int
	MaxAH           int
	MaxQPRdAtom     int // outstanding RDMA READs and atomics a QP can be the target of
	MaxQPInitRdAtom int // outstanding RDMA READs and atomics a QP can initiate
	AtomicCap       AtomicCap
	MaxPKeys        int
	PhysPortCount   uint8
	// MaxInlineData is the largest inline size an RC QP of this device
	// accepts. libibverbs has no attribute for it: it is probed once per
	// Context by creating throwaway QPs. 0 when the probe failed.
	MaxInlineData int
}

// Query returns the device's attributes. Equivalent to ibv_devinfo -v
// (ibv_query_device).
func (c *Context) Query() (DeviceAttr, error) {
	p, err := c.ptrOr("ibv_query_device")
	if err != nil {
		return DeviceAttr{}, err
	}
	a, err := ibvQueryDevice(p)
	if err != nil {
		return a, err
	}
	a.MaxInlineData, _ = c.MaxInline(RC)
	return a, nil
}

// MaxInline returns the largest inline size a queue pair of type typ
// accepts on this device, probed once per type by creating throwaway QPs:
// libibverbs has no attribute for it, and it differs by type (EFA's UD
// has none where its RC has some). Sizes are tried from 4096 down to 32,
// as perftest's probe does, then 0.
func (c *Context) MaxInline(typ QPType) (int, error) {
	c.inlineMu.Lock()
	defer c.inlineMu.Unlock()
	if r, ok := c.maxInline[typ]; ok {
		return r.size, r.err
	}
	p, err := c.ptrOr("probe max_inline_data")
	if err != nil {
		return 0, err
	}
	var r inlineProbe
	r.size, r.err = probeMaxInline(p, typ)
	if c.maxInline == nil {
		c.maxInline = map[QPType]inlineProbe{}
	}
	c.maxInline[typ] = r
	return r.size, r.err
}

// PortAttr holds a port's attributes (struct ibv_port_attr).
type PortAttr struct {
	State        PortState
	MaxMTU       MTU
	ActiveMTU    MTU
	GIDTableLen  int
	PKeyTableLen int
	LID          uint16
	SMLID        uint16
	LinkLayer    LinkLayer
	ActiveSpeed  uint8 // enum ibv_port_speed-ish code, as ibv_devinfo's active_speed
	ActiveWidth  uint8
}

// QueryPort returns a port's attributes; ports count from 1. Equivalent to
// ibv_devinfo's port section (ibv_query_port).
func (c *Context) QueryPort(port uint8) (PortAttr, error) {
	p, err := c.ptrOr("ibv_query_port")
	if err != nil {
		return PortAttr{}, err
	}
	pa, err := ibvQueryPort(p, port)
	var e *Error
	if errors.As(err, &e) {
		// libibverbs' EINVAL alone does not say the port is not the device's.
		e.Op = fmt.Sprintf("ibv_query_port %s port %d", c.name, port)
		if errors.Is(err, syscall.EINVAL) {
			e.Detail = "ports count from 1; ibv_devinfo -d " + c.name + " lists them"
		}
	}
	return pa, err
}

// GIDs returns the filled entries of a port's GID table with their types,
// in index order: all of them when n <= 0, else those among the first n.
// The table is read in one call (ibv_query_gid_table), so a whole table
// costs what one entry does; reading it entry by entry through sysfs
// takes seconds on rxe's 1024 entries. Equivalent to show_gids.
func (c *Context) GIDs(port uint8, n int) ([]GID, error) {
	p, err := c.ptrOr("ibv_query_gid_table")
	if err != nil {
		return nil, err
	}
	a, err := ibvQueryDevice(p)
	if err != nil {
		return nil, err
	}
	total := 0
	for i := 1; i <= int(a.PhysPortCount); i++ {
		pa, err := ibvQueryPort(p, uint8(i))
		if err != nil {
			return nil, err
		}
		total += pa.GIDTableLen
	}
	all, ports, err := ibvQueryGIDTable(p, total)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Op += " " + c.name
		}
		return nil, err
	}
	var out []GID
	for i, g := range all {
		if ports[i] == port && !g.IsZero() && (n <= 0 || g.Index < n) {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b GID) int { return a.Index - b.Index })
	return out, nil
}

// GID returns the GID at index of a port's table (ibv_query_gid_ex), for an
// explicit choice such as perftest's -x. An empty entry is an error.
func (c *Context) GID(port uint8, index int) (GID, error) {
	p, err := c.ptrOr("ibv_query_gid_ex")
	if err != nil {
		return GID{}, err
	}
	g, err := ibvQueryGIDEx(p, port, index)
	if err != nil {
		return GID{}, err
	}
	if g.IsZero() {
		return GID{}, &Error{Op: fmt.Sprintf("ibv_query_gid_ex %s port %d index %d", c.name, port, index), Err: syscall.ENODATA, Detail: "empty GID table entry"}
	}
	return g, nil
}

// BestGID returns the best GID of a port's whole table, as the
// package-level BestGID ranks them (perftest's choice without -x).
func (c *Context) BestGID(port uint8) (GID, error) {
	gids, err := c.GIDs(port, 0)
	if err != nil {
		return GID{}, err
	}
	g, err := BestGID(gids)
	if err != nil {
		return GID{}, fmt.Errorf("%w on %s port %d", err, c.name, port)
	}
	return g, nil
}
