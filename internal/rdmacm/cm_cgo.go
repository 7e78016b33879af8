//go:build linux && cgo

package rdmacm

// This file is the package's only boundary with C: one unexported Go
// function per C wrapper of cm.c, named after the librdmacm call it makes.
// The C wrappers return 0 or a negative errno.

/*
#cgo CFLAGS: -Wall -Wextra
#cgo LDFLAGS: -lrdmacm -libverbs
#include <stdlib.h>
#include "cm.h"
*/
import "C"

import (
	"net/netip"
	"unsafe"

	"github.com/rdmabench/rdmabench/verbs"
)

const haveCgo = true

func toRBAddr(ip netip.Addr, port uint16) C.struct_rb_addr {
	var a C.struct_rb_addr
	if !ip.IsValid() {
		return a
	}
	a.set = 1
	a.port = C.uint16_t(port)
	if ip.Is4() || ip.Is4In6() {
		b := ip.Unmap().As4()
		for i := range b {
			a.ip[i] = C.uint8_t(b[i])
		}
		return a
	}
	a.v6 = 1
	b := ip.As16()
	for i := range b {
		a.ip[i] = C.uint8_t(b[i])
	}
	return a
}

func fromRBAddr(a *C.struct_rb_addr) netip.AddrPort {
	if a.set == 0 {
		return netip.AddrPort{}
	}
	b := *(*[16]byte)(unsafe.Pointer(&a.ip[0]))
	var ip netip.Addr
	if a.v6 != 0 {
		ip = netip.AddrFrom16(b)
	} else {
		ip = netip.AddrFrom4([4]byte(b[:4]))
	}
	return netip.AddrPortFrom(ip, uint16(a.port))
}

// rdmaCreateEventChannel mirrors rdma_create_event_channel; the channel's fd
// is made non-blocking.
func rdmaCreateEventChannel() (unsafe.Pointer, int, error) {
	var ch *C.struct_rdma_event_channel
	var fd C.int
	if rc := C.rb_create_channel(&ch, &fd); rc != 0 {
		return nil, -1, errRet("rdma_create_event_channel", int(rc))
	}
	return unsafe.Pointer(ch), int(fd), nil
}

// rdmaDestroyEventChannel mirrors rdma_destroy_event_channel.
func rdmaDestroyEventChannel(ch unsafe.Pointer) {
	C.rb_destroy_channel((*C.struct_rdma_event_channel)(ch))
}

// rdmaCreateID mirrors rdma_create_id.
func rdmaCreateID(ch unsafe.Pointer, ps portSpace) (unsafe.Pointer, error) {
	var id *C.struct_rdma_cm_id
	if rc := C.rb_create_id((*C.struct_rdma_event_channel)(ch), C.int(ps), &id); rc != 0 {
		return nil, errRet("rdma_create_id", int(rc))
	}
	return unsafe.Pointer(id), nil
}

// rdmaDestroyID mirrors rdma_destroy_id.
func rdmaDestroyID(id unsafe.Pointer) error {
	return errRet("rdma_destroy_id", int(C.rb_destroy_id((*C.struct_rdma_cm_id)(id))))
}

// rdmaBindAddr mirrors rdma_bind_addr.
func rdmaBindAddr(id unsafe.Pointer, a netip.AddrPort) error {
	ra := toRBAddr(a.Addr(), a.Port())
	return errRet("rdma_bind_addr "+a.String(), int(C.rb_bind((*C.struct_rdma_cm_id)(id), &ra)))
}

// rdmaListen mirrors rdma_listen.
func rdmaListen(id unsafe.Pointer, backlog int) error {
	return errRet("rdma_listen", int(C.rb_listen((*C.struct_rdma_cm_id)(id), C.int(backlog))))
}

// rdmaResolveAddr mirrors rdma_resolve_addr; src may be the zero Addr.
func rdmaResolveAddr(id unsafe.Pointer, src netip.Addr, dst netip.AddrPort, timeoutMs int) error {
	s := toRBAddr(src, 0)
	d := toRBAddr(dst.Addr(), dst.Port())
	return errRet("rdma_resolve_addr "+dst.String(), int(C.rb_resolve_addr((*C.struct_rdma_cm_id)(id), &s, &d, C.int(timeoutMs))))
}

// rdmaSetTOS mirrors rdma_set_option(RDMA_OPTION_ID, RDMA_OPTION_ID_TOS).
func rdmaSetTOS(id unsafe.Pointer, tos uint8) error {
	return errRet("rdma_set_option TOS", int(C.rb_set_tos((*C.struct_rdma_cm_id)(id), C.uint8_t(tos))))
}

// rdmaResolveRoute mirrors rdma_resolve_route.
func rdmaResolveRoute(id unsafe.Pointer, timeoutMs int) error {
	return errRet("rdma_resolve_route", int(C.rb_resolve_route((*C.struct_rdma_cm_id)(id), C.int(timeoutMs))))
}

// rdmaGetCMEvent mirrors rdma_get_cm_event + rdma_ack_cm_event, copying
// out what the package uses. With no event pending it fails with EAGAIN.
func rdmaGetCMEvent(ch unsafe.Pointer) (event, error) {
	var e C.struct_rb_event
	if rc := C.rb_get_event((*C.struct_rdma_event_channel)(ch), &e); rc != 0 {
		return event{}, errRet("rdma_get_cm_event", int(rc))
	}
	ev := event{
		typ:      eventType(e._type),
		status:   int(e.status),
		id:       unsafe.Pointer(e.id),
		listenID: unsafe.Pointer(e.listen_id),
		qpn:      uint32(e.qp_num),
		qkey:     uint32(e.qkey),
		respRes:  uint8(e.responder_resources),
		initDep:  uint8(e.initiator_depth),
		private:  C.GoBytes(unsafe.Pointer(&e.private_data[0]), C.int(e.private_len)),
		ahGlobal: e.ah_is_global != 0,
		ah: verbs.AHAttr{
			Port:      uint8(e.ah_port),
			DLID:      uint16(e.ah_dlid),
			DGID:      *(*[16]byte)(unsafe.Pointer(&e.ah_dgid[0])),
			SGIDIndex: int(e.ah_sgid_index),
			HopLimit:  uint8(e.ah_hop_limit),
			SL:        uint8(e.ah_sl),
		},
	}
	return ev, nil
}

// rdmaAddrs mirrors rdma_get_local_addr and rdma_get_peer_addr.
func rdmaAddrs(id unsafe.Pointer) (local, remote netip.AddrPort) {
	var l, r C.struct_rb_addr
	C.rb_addrs((*C.struct_rdma_cm_id)(id), &l, &r)
	return fromRBAddr(&l), fromRBAddr(&r)
}

// idGIDs returns the source and destination GIDs of the id's route
// (id->route.addr.addr.ibaddr).
func idGIDs(id unsafe.Pointer) (sgid, dgid [16]byte) {
	C.rb_gids((*C.struct_rdma_cm_id)(id), (*C.uint8_t)(unsafe.Pointer(&sgid[0])), (*C.uint8_t)(unsafe.Pointer(&dgid[0])))
	return sgid, dgid
}

// idDevice returns the name of the device the id is bound to
// (ibv_get_device_name(id->verbs->device)) and its port; "" while unbound.
func idDevice(id unsafe.Pointer) (string, uint8) {
	var port C.uint8_t
	name := C.rb_device_name((*C.struct_rdma_cm_id)(id), &port)
	if name == nil {
		return "", uint8(port)
	}
	return C.GoString(name), uint8(port)
}

// rdmaInitQPAttrModify mirrors rdma_init_qp_attr followed by ibv_modify_qp
// with what it returned. access >= 0 replaces the access flags the CM
// chose; rdAtomic > 0 replaces max_dest_rd_atomic (RTR) or max_rd_atomic
// (RTS), as librdmacm does with the connection's responder resources and
// initiator depth; qkey > 0 replaces the UD Q_Key; *mtu > 0 caps the path
// MTU (RTR), and *mtu returns the one set (0 where the step sets none).
func rdmaInitQPAttrModify(id, qp unsafe.Pointer, state verbs.QPState, access int, rdAtomic uint8, qkey uint32, mtu *verbs.MTU) error {
	var failed C.int
	var m C.int
	if mtu != nil {
		m = C.int(*mtu)
	}
	rc := C.rb_modify_qp((*C.struct_rdma_cm_id)(id), (*C.struct_ibv_qp)(qp), C.int(state), C.int(access), C.uint8_t(rdAtomic), C.uint32_t(qkey), &m, &failed)
	if rc == 0 {
		if mtu != nil {
			*mtu = verbs.MTU(m)
		}
		return nil
	}
	op := "rdma_init_qp_attr"
	if failed == 2 {
		op = "ibv_modify_qp"
	}
	return errRet(op+" ->"+state.String(), int(rc))
}

func privPtr(b []byte) (unsafe.Pointer, C.uint8_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(unsafe.SliceData(b)), C.uint8_t(len(b))
}

// rdmaConnect mirrors rdma_connect for a QP not created on the id.
func rdmaConnect(id unsafe.Pointer, qpn uint32, priv []byte, respRes, initDepth uint8) error {
	p, n := privPtr(priv)
	return errRet("rdma_connect", int(C.rb_connect((*C.struct_rdma_cm_id)(id), C.uint32_t(qpn), p, n, C.uint8_t(respRes), C.uint8_t(initDepth))))
}

// rdmaAccept mirrors rdma_accept for a QP not created on the id.
func rdmaAccept(id unsafe.Pointer, qpn uint32, priv []byte, respRes, initDepth uint8) error {
	p, n := privPtr(priv)
	return errRet("rdma_accept", int(C.rb_accept((*C.struct_rdma_cm_id)(id), C.uint32_t(qpn), p, n, C.uint8_t(respRes), C.uint8_t(initDepth))))
}

// rdmaReject mirrors rdma_reject.
func rdmaReject(id unsafe.Pointer, priv []byte) error {
	p, n := privPtr(priv)
	return errRet("rdma_reject", int(C.rb_reject((*C.struct_rdma_cm_id)(id), p, n)))
}

// rdmaEstablish mirrors rdma_establish.
func rdmaEstablish(id unsafe.Pointer) error {
	return errRet("rdma_establish", int(C.rb_establish((*C.struct_rdma_cm_id)(id))))
}

// rdmaDisconnect mirrors rdma_disconnect.
func rdmaDisconnect(id unsafe.Pointer) error {
	return errRet("rdma_disconnect", int(C.rb_disconnect((*C.struct_rdma_cm_id)(id))))
}

// rdmaMigrateID mirrors rdma_migrate_id.
func rdmaMigrateID(id, ch unsafe.Pointer) error {
	return errRet("rdma_migrate_id", int(C.rb_migrate((*C.struct_rdma_cm_id)(id), (*C.struct_rdma_event_channel)(ch))))
}

// eventName mirrors rdma_event_str.
func eventName(t eventType) string {
	return C.GoString(C.rdma_event_str(C.enum_rdma_cm_event_type(t)))
}

// cConstants maps librdmacm constants to their C values, for a test that
// checks the Go mirrors.
func cConstants() map[string]int64 {
	return map[string]int64{
		"RDMA_PS_TCP": C.RDMA_PS_TCP, "RDMA_PS_UDP": C.RDMA_PS_UDP,
		"RDMA_CM_EVENT_ADDR_RESOLVED": C.RDMA_CM_EVENT_ADDR_RESOLVED, "RDMA_CM_EVENT_ADDR_ERROR": C.RDMA_CM_EVENT_ADDR_ERROR,
		"RDMA_CM_EVENT_ROUTE_RESOLVED": C.RDMA_CM_EVENT_ROUTE_RESOLVED, "RDMA_CM_EVENT_ROUTE_ERROR": C.RDMA_CM_EVENT_ROUTE_ERROR,
		"RDMA_CM_EVENT_CONNECT_REQUEST": C.RDMA_CM_EVENT_CONNECT_REQUEST, "RDMA_CM_EVENT_CONNECT_RESPONSE": C.RDMA_CM_EVENT_CONNECT_RESPONSE,
		"RDMA_CM_EVENT_CONNECT_ERROR": C.RDMA_CM_EVENT_CONNECT_ERROR, "RDMA_CM_EVENT_UNREACHABLE": C.RDMA_CM_EVENT_UNREACHABLE,
		"RDMA_CM_EVENT_REJECTED": C.RDMA_CM_EVENT_REJECTED, "RDMA_CM_EVENT_ESTABLISHED": C.RDMA_CM_EVENT_ESTABLISHED,
		"RDMA_CM_EVENT_DISCONNECTED": C.RDMA_CM_EVENT_DISCONNECTED, "RDMA_CM_EVENT_DEVICE_REMOVAL": C.RDMA_CM_EVENT_DEVICE_REMOVAL,
		"RDMA_CM_EVENT_TIMEWAIT_EXIT": C.RDMA_CM_EVENT_TIMEWAIT_EXIT,
		"RDMA_UDP_QKEY":               C.RDMA_UDP_QKEY,
	}
}
