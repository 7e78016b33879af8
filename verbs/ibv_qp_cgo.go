//go:build linux && cgo

package verbs

// Queue pairs (create, modify, query, destroy), posting to them, and
// address handles.

/*
#cgo noescape rb_post_send
#cgo nocallback rb_post_send
#cgo noescape rb_post_recv
#cgo nocallback rb_post_recv
#include "ibv.h"
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// ibvPostSend mirrors ibv_post_send for one work request built on the C
// stack. It returns 0 or the errno value ibv_post_send returned.
func ibvPostSend(qp unsafe.Pointer, wr *SendWR, ah unsafe.Pointer) int {
	return int(C.rb_post_send((*C.struct_ibv_qp)(qp), C.uint64_t(wr.ID), C.uint32_t(wr.Op), C.uint32_t(wr.Flags),
		C.uint64_t(wr.Local.Addr), C.uint32_t(wr.Local.Len), C.uint32_t(wr.Local.LKey),
		C.uint64_t(wr.RemoteAddr), C.uint32_t(wr.RKey), C.uint32_t(wr.Imm),
		C.uint64_t(wr.CompareAdd), C.uint64_t(wr.Swap),
		(*C.struct_ibv_ah)(ah), C.uint32_t(wr.RemoteQPN), C.uint32_t(wr.RemoteQKey)))
}

// ibvPostRecv mirrors ibv_post_recv for one work request of one SGE.
func ibvPostRecv(qp unsafe.Pointer, id uint64, sge SGE) int {
	return int(C.rb_post_recv((*C.struct_ibv_qp)(qp), C.uint64_t(id), C.uint64_t(sge.Addr), C.uint32_t(sge.Len), C.uint32_t(sge.LKey)))
}

// ibvCreateQP mirrors ibv_create_qp. It returns the QP, its number and the
// capabilities the device granted.
func ibvCreateQP(pd unsafe.Pointer, c *qpCreate) (unsafe.Pointer, uint32, qpCaps, error) {
	var a C.struct_ibv_qp_init_attr
	a.send_cq = (*C.struct_ibv_cq)(c.sendCQ)
	a.recv_cq = (*C.struct_ibv_cq)(c.recvCQ)
	a.qp_type = C.enum_ibv_qp_type(c.typ)
	a.cap.max_send_wr = C.uint32_t(c.caps.MaxSendWR)
	a.cap.max_recv_wr = C.uint32_t(c.caps.MaxRecvWR)
	a.cap.max_send_sge = C.uint32_t(c.caps.MaxSendSGE)
	a.cap.max_recv_sge = C.uint32_t(c.caps.MaxRecvSGE)
	a.cap.max_inline_data = C.uint32_t(c.caps.MaxInlineData)
	if c.sigAll {
		a.sq_sig_all = 1
	}
	qp, err := C.ibv_create_qp((*C.struct_ibv_pd)(pd), &a)
	if qp == nil {
		if err == nil { // bnxt_re and others return NULL without errno
			return nil, 0, qpCaps{}, &Error{Op: "ibv_create_qp", Err: syscall.EIO, Detail: "the provider set no errno"}
		}
		return nil, 0, qpCaps{}, errnoOf("ibv_create_qp", err)
	}
	return unsafe.Pointer(qp), uint32(qp.qp_num), qpCaps{
		MaxSendWR:     uint32(a.cap.max_send_wr),
		MaxRecvWR:     uint32(a.cap.max_recv_wr),
		MaxSendSGE:    uint32(a.cap.max_send_sge),
		MaxRecvSGE:    uint32(a.cap.max_recv_sge),
		MaxInlineData: uint32(a.cap.max_inline_data),
	}, nil
}

// ibvQueryQPState mirrors ibv_query_qp, asking for the state only.
func ibvQueryQPState(qp unsafe.Pointer) (QPState, error) {
	var a C.struct_ibv_qp_attr
	var init C.struct_ibv_qp_init_attr
	if rc := C.ibv_query_qp((*C.struct_ibv_qp)(qp), &a, C.IBV_QP_STATE, &init); rc != 0 {
		return 0, errRet("ibv_query_qp", int(rc))
	}
	return QPState(a.qp_state), nil
}

// ibvDestroyQP mirrors ibv_destroy_qp.
func ibvDestroyQP(qp unsafe.Pointer) error {
	return errRet("ibv_destroy_qp", int(C.ibv_destroy_qp((*C.struct_ibv_qp)(qp))))
}

// ibvModifyQP mirrors ibv_modify_qp, which returns an errno value.
func ibvModifyQP(qp unsafe.Pointer, m *qpModify) error {
	var a C.struct_ibv_qp_attr
	fillQPAttr(&a, m)
	rc := C.ibv_modify_qp((*C.struct_ibv_qp)(qp), &a, C.int(m.mask))
	return errRet("ibv_modify_qp", int(rc))
}

// fillQPAttr fills the struct ibv_qp_attr that ibv_modify_qp takes.
func fillQPAttr(a *C.struct_ibv_qp_attr, m *qpModify) {
	a.qp_state = C.enum_ibv_qp_state(m.state)
	a.pkey_index = C.uint16_t(m.pkeyIndex)
	a.port_num = C.uint8_t(m.port)
	a.qp_access_flags = C.uint(m.access)
	a.qkey = C.uint32_t(m.qkey)
	a.path_mtu = C.enum_ibv_mtu(m.mtu)
	a.dest_qp_num = C.uint32_t(m.destQPN)
	a.rq_psn = C.uint32_t(m.rqPSN)
	a.max_dest_rd_atomic = C.uint8_t(m.maxDestRdAtomic)
	a.min_rnr_timer = C.uint8_t(m.minRNRTimer)
	fillAH(&a.ah_attr, &m.ah)
	a.sq_psn = C.uint32_t(m.sqPSN)
	a.timeout = C.uint8_t(m.timeout)
	a.retry_cnt = C.uint8_t(m.retryCnt)
	a.rnr_retry = C.uint8_t(m.rnrRetry)
	a.max_rd_atomic = C.uint8_t(m.maxRdAtomic)
}

func fillAH(a *C.struct_ibv_ah_attr, h *ahFields) {
	a.dlid = C.uint16_t(h.dlid)
	a.sl = C.uint8_t(h.sl)
	a.port_num = C.uint8_t(h.port)
	if h.global {
		a.is_global = 1
		*(*[16]byte)(unsafe.Pointer(&a.grh.dgid)) = h.dgid
		a.grh.sgid_index = C.uint8_t(h.sgidIndex)
		a.grh.hop_limit = C.uint8_t(h.hopLimit)
		a.grh.traffic_class = C.uint8_t(h.trafficClass)
		a.grh.flow_label = C.uint32_t(h.flowLabel)
	}
}

// ibvCreateAH mirrors ibv_create_ah.
func ibvCreateAH(pd unsafe.Pointer, h *ahFields) (unsafe.Pointer, error) {
	var a C.struct_ibv_ah_attr
	fillAH(&a, h)
	ah, err := C.ibv_create_ah((*C.struct_ibv_pd)(pd), &a)
	if ah == nil {
		return nil, errnoOf("ibv_create_ah", err)
	}
	return unsafe.Pointer(ah), nil
}

// ibvDestroyAH mirrors ibv_destroy_ah.
func ibvDestroyAH(ah unsafe.Pointer) error {
	return errRet("ibv_destroy_ah", int(C.ibv_destroy_ah((*C.struct_ibv_ah)(ah))))
}

// ibvQueryQP mirrors ibv_query_qp, which returns an errno value.
func ibvQueryQP(qp unsafe.Pointer) (QPAttr, error) {
	var a C.struct_ibv_qp_attr
	var init C.struct_ibv_qp_init_attr
	mask := C.int(maskState | maskPKeyIndex | maskPort | maskAV | maskPathMTU | maskDestQPN)
	if rc := C.ibv_query_qp((*C.struct_ibv_qp)(qp), &a, mask, &init); rc != 0 {
		return QPAttr{}, errRet("ibv_query_qp", int(rc))
	}
	return qpAttrOf(&a), nil
}

// qpAttrOf reads what ibv_query_qp filled in.
func qpAttrOf(a *C.struct_ibv_qp_attr) QPAttr {
	h := &a.ah_attr
	return QPAttr{
		State: QPState(a.qp_state), Port: uint8(a.port_num), PKeyIndex: uint16(a.pkey_index),
		MTU: MTU(a.path_mtu), DestQPN: uint32(a.dest_qp_num),
		DLID: uint16(h.dlid), SL: uint8(h.sl), IsGlobal: h.is_global != 0,
		DGID:      *(*[16]byte)(unsafe.Pointer(&h.grh.dgid)),
		SGIDIndex: uint8(h.grh.sgid_index), HopLimit: uint8(h.grh.hop_limit),
		TrafficClass: uint8(h.grh.traffic_class), FlowLabel: uint32(h.grh.flow_label),
	}
}

// qpAttrRoundTrip is the struct ibv_qp_attr that ibv_modify_qp is given
// for m, read back as ibv_query_qp's would be: what a device that keeps
// every field reports. Tests of the attributes handed to libibverbs use
// it where rxe drops a field (the service level).
func qpAttrRoundTrip(m *qpModify) QPAttr {
	var a C.struct_ibv_qp_attr
	fillQPAttr(&a, m)
	return qpAttrOf(&a)
}

// ahAttrRoundTrip is the struct ibv_ah_attr ibv_create_ah is given for h,
// read back as QPAttr's address vector fields.
func ahAttrRoundTrip(h *ahFields) QPAttr {
	var a C.struct_ibv_qp_attr
	fillAH(&a.ah_attr, h)
	return qpAttrOf(&a)
}
