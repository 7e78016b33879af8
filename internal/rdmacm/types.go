package rdmacm

import (
	"unsafe"

	"github.com/rdmabench/rdmabench/verbs"
)

// portSpace mirrors enum rdma_port_space.
type portSpace int

const (
	psTCP portSpace = 0x0106 // RDMA_PS_TCP: reliable connected
	psUDP portSpace = 0x0111 // RDMA_PS_UDP: unreliable datagram
)

// udpQKey is RDMA_UDP_QKEY, the Q_Key the CM gives UD QPs of RDMA_PS_UDP.
const udpQKey = 0x01234567

// eventType mirrors enum rdma_cm_event_type.
type eventType int32

const (
	evAddrResolved eventType = iota
	evAddrError
	evRouteResolved
	evRouteError
	evConnectRequest
	evConnectResponse
	evConnectError
	evUnreachable
	evRejected
	evEstablished
	evDisconnected
	evDeviceRemoval
	evMulticastJoin
	evMulticastError
	evAddrChange
	evTimewaitExit
)

func (t eventType) String() string { return eventName(t) }

// event is a struct rdma_cm_event as copied out before its acknowledgement.
type event struct {
	typ      eventType
	status   int // negative errno, or the CM's reject reason for REJECTED
	id       unsafe.Pointer
	listenID unsafe.Pointer
	qpn      uint32 // the peer's QP (UD: from the SIDR reply)
	qkey     uint32
	respRes  uint8
	initDep  uint8
	private  []byte
	ahGlobal bool
	ah       verbs.AHAttr // UD: the address vector to the peer
}
