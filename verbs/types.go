package verbs

import (
	"fmt"
	"strings"
)

// The numeric values of these types are libibverbs' own enum values; a test
// checks them against verbs.h.

// MTU is a path MTU (enum ibv_mtu): MTU256 ... MTU4096.
type MTU uint8

const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

// Bytes returns the MTU in bytes, or 0 for an invalid value.
func (m MTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << m
}

func (m MTU) String() string {
	if b := m.Bytes(); b != 0 {
		return fmt.Sprint(b)
	}
	return fmt.Sprintf("MTU(%d)", uint8(m))
}

// ParseMTU returns the MTU for a size in bytes: 256, 512, 1024, 2048 or 4096.
func ParseMTU(bytes int) (MTU, error) {
	for m := MTU256; m <= MTU4096; m++ {
		if m.Bytes() == bytes {
			return m, nil
		}
	}
	return 0, fmt.Errorf("verbs: invalid MTU %d (want 256, 512, 1024, 2048 or 4096)", bytes)
}

// PortState is a port's logical state (enum ibv_port_state).
type PortState uint8

const (
	PortNOP         PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

// String returns the state as ibv_devinfo prints it: "PORT_ACTIVE" is
// shown as "ACTIVE".
func (s PortState) String() string {
	switch s {
	case PortNOP:
		return "NOP"
	case PortDown:
		return "DOWN"
	case PortInit:
		return "INIT"
	case PortArmed:
		return "ARMED"
	case PortActive:
		return "ACTIVE"
	case PortActiveDefer:
		return "ACTIVE_DEFER"
	}
	return fmt.Sprintf("PortState(%d)", uint8(s))
}

// LinkLayer is a port's link layer.
type LinkLayer uint8

const (
	LinkLayerUnspecified LinkLayer = 0
	LinkLayerInfiniBand  LinkLayer = 1
	LinkLayerEthernet    LinkLayer = 2
)

func (l LinkLayer) String() string {
	switch l {
	case LinkLayerUnspecified:
		return "Unspecified"
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return fmt.Sprintf("LinkLayer(%d)", uint8(l))
}

// AtomicCap says how a device's atomic operations are atomic (enum
// ibv_atomic_cap).
type AtomicCap uint8

const (
	AtomicNone   AtomicCap = 0 // no atomics
	AtomicHCA    AtomicCap = 1 // atomic with respect to this device only
	AtomicGlobal AtomicCap = 2 // atomic with respect to the CPU and other devices too
)

func (a AtomicCap) String() string {
	switch a {
	case AtomicNone:
		return "none"
	case AtomicHCA:
		return "HCA"
	case AtomicGlobal:
		return "global"
	}
	return fmt.Sprintf("AtomicCap(%d)", uint8(a))
}

// NodeType is a device's node type (enum ibv_node_type).
type NodeType int8

const (
	NodeUnknown NodeType = -1
	NodeCA      NodeType = 1
	NodeSwitch  NodeType = 2
	NodeRouter  NodeType = 3
	NodeRNIC    NodeType = 4
	NodeUSNIC   NodeType = 5
)

func (n NodeType) String() string {
	switch n {
	case NodeCA:
		return "CA"
	case NodeSwitch:
		return "switch"
	case NodeRouter:
		return "router"
	case NodeRNIC:
		return "RNIC"
	case NodeUSNIC:
		return "usNIC"
	}
	return "unknown"
}

// GUID is a node or port GUID in host byte order.
type GUID uint64

// String formats the GUID as ibv_devinfo does: "0002:c903:00a1:b2c3".
func (g GUID) String() string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", uint16(g>>48), uint16(g>>32), uint16(g>>16), uint16(g))
}

// Access is a set of memory and queue pair access flags (enum
// ibv_access_flags).
type Access uint32

const (
	AccessLocalWrite   Access = 1 << 0
	AccessRemoteWrite  Access = 1 << 1
	AccessRemoteRead   Access = 1 << 2
	AccessRemoteAtomic Access = 1 << 3
	// AccessOnDemand registers the region without pinning it: the device
	// faults its pages in as it touches them (on-demand paging). Only where
	// Context.ODP says the device supports it.
	AccessOnDemand Access = 1 << 6
)

// AccessAll is every access flag of this package: local write and remote
// write, read and atomic.
const AccessAll = AccessLocalWrite | AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic

func (a Access) String() string {
	return flagString(uint32(a), []string{"LocalWrite", "RemoteWrite", "RemoteRead", "RemoteAtomic", "MWBind", "ZeroBased", "OnDemand"})
}

func flagString(v uint32, names []string) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	for i, n := range names {
		if v&(1<<i) != 0 {
			parts = append(parts, n)
			v &^= 1 << i
		}
	}
	if v != 0 {
		parts = append(parts, fmt.Sprintf("%#x", v))
	}
	return strings.Join(parts, "|")
}

// QPType is a queue pair's transport (enum ibv_qp_type).
type QPType uint8

const (
	RC QPType = 2 // reliable connected
	UC QPType = 3 // unreliable connected
	UD QPType = 4 // unreliable datagram
)

func (t QPType) String() string {
	switch t {
	case RC:
		return "RC"
	case UC:
		return "UC"
	case UD:
		return "UD"
	}
	return fmt.Sprintf("QPType(%d)", uint8(t))
}

// QPState is a queue pair's state (enum ibv_qp_state).
type QPState uint8

const (
	QPReset QPState = 0
	QPInit  QPState = 1
	QPRTR   QPState = 2 // ready to receive
	QPRTS   QPState = 3 // ready to send
	QPSQD   QPState = 4
	QPSQE   QPState = 5
	QPErr   QPState = 6
)

func (s QPState) String() string {
	switch s {
	case QPReset:
		return "RESET"
	case QPInit:
		return "INIT"
	case QPRTR:
		return "RTR"
	case QPRTS:
		return "RTS"
	case QPSQD:
		return "SQD"
	case QPSQE:
		return "SQE"
	case QPErr:
		return "ERR"
	}
	return fmt.Sprintf("QPState(%d)", uint8(s))
}

// Opcode is a send work request's operation (enum ibv_wr_opcode).
type Opcode uint32

const (
	OpWrite          Opcode = 0 // RDMA WRITE
	OpWriteImm       Opcode = 1 // RDMA WRITE with immediate: consumes a receive at the target
	OpSend           Opcode = 2
	OpSendImm        Opcode = 3
	OpRead           Opcode = 4 // RDMA READ
	OpAtomicCmpSwap  Opcode = 5 // 8-byte compare and swap; the old value lands in Local
	OpAtomicFetchAdd Opcode = 6 // 8-byte fetch and add; the old value lands in Local
)

func (o Opcode) String() string {
	switch o {
	case OpWrite:
		return "RDMA_WRITE"
	case OpWriteImm:
		return "RDMA_WRITE_WITH_IMM"
	case OpSend:
		return "SEND"
	case OpSendImm:
		return "SEND_WITH_IMM"
	case OpRead:
		return "RDMA_READ"
	case OpAtomicCmpSwap:
		return "ATOMIC_CMP_AND_SWP"
	case OpAtomicFetchAdd:
		return "ATOMIC_FETCH_AND_ADD"
	}
	return fmt.Sprintf("Opcode(%d)", uint32(o))
}

// SendFlags are a send work request's flags (enum ibv_send_flags).
type SendFlags uint32

const (
	FlagFence     SendFlags = 1 << 0
	FlagSignaled  SendFlags = 1 << 1 // generate a completion
	FlagSolicited SendFlags = 1 << 2
	FlagInline    SendFlags = 1 << 3 // copy the data into the WQE; no lkey needed
)

func (f SendFlags) String() string {
	return flagString(uint32(f), []string{"Fence", "Signaled", "Solicited", "Inline"})
}

// WCStatus is a work completion's status (enum ibv_wc_status).
type WCStatus uint32

const (
	WCSuccess        WCStatus = 0
	WCLocLenErr      WCStatus = 1
	WCLocQPOpErr     WCStatus = 2
	WCLocProtErr     WCStatus = 4
	WCWRFlushErr     WCStatus = 5
	WCBadRespErr     WCStatus = 7
	WCLocAccessErr   WCStatus = 8
	WCRemInvReqErr   WCStatus = 9
	WCRemAccessErr   WCStatus = 10
	WCRemOpErr       WCStatus = 11
	WCRetryExcErr    WCStatus = 12
	WCRNRRetryExcErr WCStatus = 13
	WCGeneralErr     WCStatus = 21
)

// String returns libibverbs' description (ibv_wc_status_str).
func (s WCStatus) String() string { return wcStatusStr(s) }

// WCOpcode is a work completion's operation (enum ibv_wc_opcode).
type WCOpcode uint32

const (
	WCSend         WCOpcode = 0
	WCWrite        WCOpcode = 1
	WCRead         WCOpcode = 2
	WCCompSwap     WCOpcode = 3
	WCFetchAdd     WCOpcode = 4
	WCRecv         WCOpcode = 128 // also a bit: opcode&WCRecv != 0 for every receive
	WCRecvWriteImm WCOpcode = 129
)

func (o WCOpcode) String() string {
	switch o {
	case WCSend:
		return "SEND"
	case WCWrite:
		return "RDMA_WRITE"
	case WCRead:
		return "RDMA_READ"
	case WCCompSwap:
		return "COMP_SWAP"
	case WCFetchAdd:
		return "FETCH_ADD"
	case WCRecv:
		return "RECV"
	case WCRecvWriteImm:
		return "RECV_RDMA_WITH_IMM"
	}
	return fmt.Sprintf("WCOpcode(%d)", uint32(o))
}

// WCFlags are a work completion's flags (enum ibv_wc_flags).
type WCFlags uint32

const (
	WCFlagGRH     WCFlags = 1 << 0 // a UD receive: the first 40 bytes of the buffer hold the GRH
	WCFlagWithImm WCFlags = 1 << 1 // Imm is valid
)

func (f WCFlags) String() string {
	return flagString(uint32(f), []string{"GRH", "WithImm"})
}

// WorkCompletion is one completion (struct ibv_wc) as [CQ.Poll] returns it.
// Its layout mirrors a C struct of the package, so Poll fills a slice of
// them in one cgo call.
type WorkCompletion struct {
	WRID      uint64
	Status    WCStatus
	Opcode    WCOpcode
	ByteLen   uint32
	Imm       uint32 // immediate data in host byte order, when Flags has WCFlagWithImm
	QPNum     uint32 // the local QP
	SrcQP     uint32 // the remote QP (UD)
	Flags     WCFlags
	VendorErr uint32
	PKeyIndex uint16
	SLID      uint16
	SL        uint8
	_         [3]byte
}

// Err returns nil for a successful completion and an *Error naming the
// status otherwise. (libibverbs leaves Opcode undefined in an error
// completion, so the message does not show it.)
func (wc *WorkCompletion) Err() error {
	if wc.Status == WCSuccess {
		return nil
	}
	return &Error{
		Op:  fmt.Sprintf("work completion (wr_id %d, qp %#x)", wc.WRID, wc.QPNum),
		Err: wc.Status,
		Detail: func() string {
			if wc.VendorErr != 0 {
				return fmt.Sprintf("vendor error %#x", wc.VendorErr)
			}
			return ""
		}(),
	}
}

// Error makes a WCStatus usable as an error cause, so that
// errors.Is(err, verbs.WCRemAccessErr) works.
func (s WCStatus) Error() string { return s.String() }
