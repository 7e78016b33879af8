//go:build linux && cgo

package verbs

// This file is the package's only boundary with C: one unexported Go function
// per libibverbs call (or per C wrapper that bundles a few of them into one
// crossing, in ibv.h), named after it. The rest of the package is pure Go.

/*
#cgo LDFLAGS: -libverbs
#cgo noescape rb_poll_cq
#cgo nocallback rb_poll_cq
#cgo noescape rb_post_send
#cgo nocallback rb_post_send
#cgo noescape rb_post_recv
#cgo nocallback rb_post_recv
#cgo noescape rb_req_notify_cq
#cgo nocallback rb_req_notify_cq

#include "ibv.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const haveCgo = true

// cLayout returns the sizes and offsets of struct rb_wc in the order
// Go's layout test expects.
func cLayout() []uintptr {
	var out []uintptr
	for i := 0; i < 8; i++ {
		out = append(out, uintptr(C.rb_layout(C.int(i))))
	}
	return out
}

// cConstants maps names of libibverbs constants to their C values, for a test
// that checks the Go constants.
func cConstants() map[string]int64 {
	return map[string]int64{
		"IBV_MTU_256": C.IBV_MTU_256, "IBV_MTU_4096": C.IBV_MTU_4096,
		"IBV_PORT_ACTIVE": C.IBV_PORT_ACTIVE, "IBV_LINK_LAYER_ETHERNET": C.IBV_LINK_LAYER_ETHERNET,
		"IBV_ATOMIC_GLOB": C.IBV_ATOMIC_GLOB, "IBV_NODE_RNIC": C.IBV_NODE_RNIC,
		"IBV_ACCESS_LOCAL_WRITE": C.IBV_ACCESS_LOCAL_WRITE, "IBV_ACCESS_REMOTE_WRITE": C.IBV_ACCESS_REMOTE_WRITE,
		"IBV_ACCESS_REMOTE_READ": C.IBV_ACCESS_REMOTE_READ, "IBV_ACCESS_REMOTE_ATOMIC": C.IBV_ACCESS_REMOTE_ATOMIC,
		"IBV_ACCESS_ON_DEMAND": C.IBV_ACCESS_ON_DEMAND, "IBV_ODP_SUPPORT": C.IBV_ODP_SUPPORT,
		"IBV_ODP_SUPPORT_SEND": C.IBV_ODP_SUPPORT_SEND, "IBV_ODP_SUPPORT_RECV": C.IBV_ODP_SUPPORT_RECV,
		"IBV_ODP_SUPPORT_WRITE": C.IBV_ODP_SUPPORT_WRITE, "IBV_ODP_SUPPORT_READ": C.IBV_ODP_SUPPORT_READ,
		"IBV_ODP_SUPPORT_ATOMIC": C.IBV_ODP_SUPPORT_ATOMIC,
		"IBV_QPT_RC":             C.IBV_QPT_RC, "IBV_QPT_UC": C.IBV_QPT_UC, "IBV_QPT_UD": C.IBV_QPT_UD,
		"IBV_QPS_RESET": C.IBV_QPS_RESET, "IBV_QPS_INIT": C.IBV_QPS_INIT, "IBV_QPS_RTR": C.IBV_QPS_RTR,
		"IBV_QPS_RTS": C.IBV_QPS_RTS, "IBV_QPS_ERR": C.IBV_QPS_ERR,
		"IBV_WR_RDMA_WRITE": C.IBV_WR_RDMA_WRITE, "IBV_WR_RDMA_WRITE_WITH_IMM": C.IBV_WR_RDMA_WRITE_WITH_IMM,
		"IBV_WR_SEND": C.IBV_WR_SEND, "IBV_WR_SEND_WITH_IMM": C.IBV_WR_SEND_WITH_IMM,
		"IBV_WR_RDMA_READ": C.IBV_WR_RDMA_READ, "IBV_WR_ATOMIC_CMP_AND_SWP": C.IBV_WR_ATOMIC_CMP_AND_SWP,
		"IBV_WR_ATOMIC_FETCH_AND_ADD": C.IBV_WR_ATOMIC_FETCH_AND_ADD,
		"IBV_SEND_FENCE":              C.IBV_SEND_FENCE, "IBV_SEND_SIGNALED": C.IBV_SEND_SIGNALED,
		"IBV_SEND_SOLICITED": C.IBV_SEND_SOLICITED, "IBV_SEND_INLINE": C.IBV_SEND_INLINE,
		"IBV_WC_SUCCESS": C.IBV_WC_SUCCESS, "IBV_WC_WR_FLUSH_ERR": C.IBV_WC_WR_FLUSH_ERR,
		"IBV_WC_REM_ACCESS_ERR": C.IBV_WC_REM_ACCESS_ERR, "IBV_WC_RNR_RETRY_EXC_ERR": C.IBV_WC_RNR_RETRY_EXC_ERR,
		"IBV_WC_GENERAL_ERR": C.IBV_WC_GENERAL_ERR,
		"IBV_WC_SEND":        C.IBV_WC_SEND, "IBV_WC_RDMA_WRITE": C.IBV_WC_RDMA_WRITE, "IBV_WC_RDMA_READ": C.IBV_WC_RDMA_READ,
		"IBV_WC_COMP_SWAP": C.IBV_WC_COMP_SWAP, "IBV_WC_FETCH_ADD": C.IBV_WC_FETCH_ADD,
		"IBV_WC_RECV": C.IBV_WC_RECV, "IBV_WC_RECV_RDMA_WITH_IMM": C.IBV_WC_RECV_RDMA_WITH_IMM,
		"IBV_WC_GRH": C.IBV_WC_GRH, "IBV_WC_WITH_IMM": C.IBV_WC_WITH_IMM,
		"IBV_GID_TYPE_ROCE_V2": C.IBV_GID_TYPE_ROCE_V2,
		"IBV_QP_STATE":         C.IBV_QP_STATE, "IBV_QP_ACCESS_FLAGS": C.IBV_QP_ACCESS_FLAGS,
		"IBV_QP_PKEY_INDEX": C.IBV_QP_PKEY_INDEX, "IBV_QP_PORT": C.IBV_QP_PORT, "IBV_QP_QKEY": C.IBV_QP_QKEY,
		"IBV_QP_AV": C.IBV_QP_AV, "IBV_QP_PATH_MTU": C.IBV_QP_PATH_MTU, "IBV_QP_TIMEOUT": C.IBV_QP_TIMEOUT,
		"IBV_QP_RETRY_CNT": C.IBV_QP_RETRY_CNT, "IBV_QP_RNR_RETRY": C.IBV_QP_RNR_RETRY,
		"IBV_QP_RQ_PSN": C.IBV_QP_RQ_PSN, "IBV_QP_MAX_QP_RD_ATOMIC": C.IBV_QP_MAX_QP_RD_ATOMIC,
		"IBV_QP_MIN_RNR_TIMER": C.IBV_QP_MIN_RNR_TIMER, "IBV_QP_SQ_PSN": C.IBV_QP_SQ_PSN,
		"IBV_QP_MAX_DEST_RD_ATOMIC": C.IBV_QP_MAX_DEST_RD_ATOMIC, "IBV_QP_DEST_QPN": C.IBV_QP_DEST_QPN,
	}
}

// ibvGetDeviceList mirrors ibv_get_device_list + ibv_get_device_name,
// ibv_get_device_guid, then ibv_free_device_list.
func ibvGetDeviceList() ([]DeviceInfo, error) {
	var n C.int
	list, err := C.rb_get_device_list(&n)
	if list == nil {
		return nil, errnoOf("ibv_get_device_list", err)
	}
	defer C.ibv_free_device_list(list)
	out := make([]DeviceInfo, 0, int(n))
	for i := 0; i < int(n); i++ {
		dev := C.rb_device_at(list, C.int(i))
		out = append(out, DeviceInfo{
			Name:     C.GoString(C.ibv_get_device_name(dev)),
			GUID:     GUID(be64(uint64(C.ibv_get_device_guid(dev)))),
			NodeType: NodeType(C.rb_device_node_type(dev)),
		})
	}
	return out, nil
}

// ibvOpenDevice mirrors ibv_get_device_list + ibv_open_device. It returns
// ENODEV when no device has that name.
func ibvOpenDevice(name string) (unsafe.Pointer, NodeType, error) {
	op := "ibv_open_device " + name
	var n C.int
	list, err := C.rb_get_device_list(&n)
	if list == nil {
		return nil, 0, &Error{Op: op, Err: syscall.ENODEV, Detail: "no RDMA devices: ibv_get_device_list: " + errnoOf("", err).(*Error).Err.Error()}
	}
	defer C.ibv_free_device_list(list)
	var names []string
	for i := 0; i < int(n); i++ {
		dev := C.rb_device_at(list, C.int(i))
		devName := C.GoString(C.ibv_get_device_name(dev))
		if devName != name {
			names = append(names, devName)
			continue
		}
		ctx, err := C.ibv_open_device(dev)
		if ctx == nil {
			return nil, 0, errnoOf(op, err)
		}
		return unsafe.Pointer(ctx), NodeType(C.rb_device_node_type(dev)), nil
	}
	detail := "no RDMA devices"
	if len(names) > 0 {
		detail = fmt.Sprintf("devices: %v", names)
	}
	return nil, 0, &Error{Op: op, Err: syscall.ENODEV, Detail: detail}
}

// ibvCloseDevice mirrors ibv_close_device.
func ibvCloseDevice(ctx unsafe.Pointer) error {
	return errRet("ibv_close_device", int(C.ibv_close_device((*C.struct_ibv_context)(ctx))))
}

// ibvQueryODP mirrors ibv_query_device_ex, its odp_caps only; it
// returns an errno value.
func ibvQueryODP(ctx unsafe.Pointer) (ODPCaps, error) {
	var a C.struct_ibv_device_attr_ex
	if rc := C.ibv_query_device_ex((*C.struct_ibv_context)(ctx), nil, &a); rc != 0 {
		return ODPCaps{}, errRet("ibv_query_device_ex", int(rc))
	}
	o := &a.odp_caps
	return ODPCaps{
		Supported: o.general_caps&C.IBV_ODP_SUPPORT != 0,
		RC:        ODPOps(o.per_transport_caps.rc_odp_caps),
		UC:        ODPOps(o.per_transport_caps.uc_odp_caps),
		UD:        ODPOps(o.per_transport_caps.ud_odp_caps),
	}, nil
}

// ibvQueryDevice mirrors ibv_query_device.
func ibvQueryDevice(ctx unsafe.Pointer) (DeviceAttr, error) {
	var a C.struct_ibv_device_attr
	if rc := C.ibv_query_device((*C.struct_ibv_context)(ctx), &a); rc != 0 {
		return DeviceAttr{}, errRet("ibv_query_device", int(rc))
	}
	return DeviceAttr{
		FirmwareVersion: C.GoString(&a.fw_ver[0]),
		NodeGUID:        GUID(be64(uint64(a.node_guid))),
		VendorID:        uint32(a.vendor_id),
		VendorPartID:    uint32(a.vendor_part_id),
		HWVersion:       uint32(a.hw_ver),
		MaxMRSize:       uint64(a.max_mr_size),
		MaxQP:           int(a.max_qp),
		MaxQPWR:         int(a.max_qp_wr),
		MaxSGE:          int(a.max_sge),
		MaxCQ:           int(a.max_cq),
		MaxCQE:          int(a.max_cqe),
		MaxMR:           int(a.max_mr),
		MaxPD:           int(a.max_pd),
		MaxAH:           int(a.max_ah),
		MaxQPRdAtom:     int(a.max_qp_rd_atom),
		MaxQPInitRdAtom: int(a.max_qp_init_rd_atom),
		AtomicCap:       AtomicCap(a.atomic_cap),
		MaxPKeys:        int(a.max_pkeys),
		PhysPortCount:   uint8(a.phys_port_cnt),
	}, nil
}

// probeMaxInline creates throwaway QPs of type typ (ibv_create_qp) asking
// for ever smaller inline sizes and returns the first the device accepts,
// as read back from ibv_qp_init_attr.cap.max_inline_data.
func probeMaxInline(ctx unsafe.Pointer, typ QPType) (int, error) {
	rc := int(C.rb_probe_max_inline((*C.struct_ibv_context)(ctx), C.int(typ)))
	if rc < 0 {
		return 0, errRet("probe max_inline_data", rc)
	}
	return rc, nil
}

// ibvQueryPort mirrors ibv_query_port.
func ibvQueryPort(ctx unsafe.Pointer, port uint8) (PortAttr, error) {
	var a C.struct_ibv_port_attr
	if rc := C.rb_query_port((*C.struct_ibv_context)(ctx), C.uint8_t(port), &a); rc != 0 {
		return PortAttr{}, errRet("ibv_query_port "+strconv.Itoa(int(port)), int(rc))
	}
	return PortAttr{
		State:        PortState(a.state),
		MaxMTU:       MTU(a.max_mtu),
		ActiveMTU:    MTU(a.active_mtu),
		GIDTableLen:  int(a.gid_tbl_len),
		PKeyTableLen: int(a.pkey_tbl_len),
		LID:          uint16(a.lid),
		SMLID:        uint16(a.sm_lid),
		LinkLayer:    LinkLayer(a.link_layer),
		ActiveSpeed:  uint8(a.active_speed),
		ActiveWidth:  uint8(a.active_width),
	}, nil
}

// ibvQueryGIDEx mirrors ibv_query_gid_ex. An empty entry is reported as
// ENODATA by libibverbs and returned as a zero GID with no error.
func ibvQueryGIDEx(ctx unsafe.Pointer, port uint8, index int) (GID, error) {
	var e C.struct_ibv_gid_entry
	rc, err := C.ibv_query_gid_ex((*C.struct_ibv_context)(ctx), C.uint32_t(port), C.uint32_t(index), &e, 0)
	if rc != 0 {
		code := int(rc)
		if code == -1 {
			if en, ok := err.(syscall.Errno); ok {
				code = int(en)
			}
		}
		if code == int(syscall.ENODATA) || code == -int(syscall.ENODATA) {
			return GID{Index: index}, nil
		}
		return GID{}, errRet(fmt.Sprintf("ibv_query_gid_ex port %d index %d", port, index), code)
	}
	g := GID{Index: index, Type: GIDType(e.gid_type), IfIndex: int(e.ndev_ifindex)}
	raw := (*[16]byte)(unsafe.Pointer(&e.gid))
	g.Raw = *raw
	return g, nil
}

// ibvQueryGIDTable mirrors ibv_query_gid_table: every filled entry of every
// port in one call (one ioctl on kernels since 5.10; libibverbs falls back
// to sysfs on older ones). max is the sum of the ports' gid_tbl_len: the
// kernel refuses a buffer too small for the filled entries.
func ibvQueryGIDTable(ctx unsafe.Pointer, max int) ([]GID, []uint8, error) {
	if max <= 0 {
		return nil, nil, nil
	}
	entries := (*C.struct_ibv_gid_entry)(C.calloc(C.size_t(max), C.size_t(unsafe.Sizeof(C.struct_ibv_gid_entry{}))))
	if entries == nil {
		return nil, nil, errno("ibv_query_gid_table", syscall.ENOMEM)
	}
	defer C.free(unsafe.Pointer(entries))
	n := int(C.ibv_query_gid_table((*C.struct_ibv_context)(ctx), entries, C.size_t(max), 0))
	if n < 0 {
		return nil, nil, errRet("ibv_query_gid_table", n)
	}
	all := unsafe.Slice(entries, n)
	gids := make([]GID, n)
	ports := make([]uint8, n)
	for i, e := range all {
		gids[i] = GID{Index: int(e.gid_index), Type: GIDType(e.gid_type), IfIndex: int(e.ndev_ifindex)}
		gids[i].Raw = *(*[16]byte)(unsafe.Pointer(&e.gid))
		ports[i] = uint8(e.port_num)
	}
	return gids, ports, nil
}

// ibvAllocPD mirrors ibv_alloc_pd.
func ibvAllocPD(ctx unsafe.Pointer) (unsafe.Pointer, error) {
	pd, err := C.ibv_alloc_pd((*C.struct_ibv_context)(ctx))
	if pd == nil {
		return nil, errnoOf("ibv_alloc_pd", err)
	}
	return unsafe.Pointer(pd), nil
}

// ibvDeallocPD mirrors ibv_dealloc_pd.
func ibvDeallocPD(pd unsafe.Pointer) error {
	return errRet("ibv_dealloc_pd", int(C.ibv_dealloc_pd((*C.struct_ibv_pd)(pd))))
}

// ibvRegMR mirrors ibv_reg_mr. addr must not point into the Go heap.
func ibvRegMR(pd unsafe.Pointer, addr uintptr, length int, access Access) (mr unsafe.Pointer, lkey, rkey uint32, err error) {
	p, cerr := C.rb_reg_mr((*C.struct_ibv_pd)(pd), C.uint64_t(addr), C.size_t(length), C.int(access))
	if p == nil {
		return nil, 0, 0, errnoOf("ibv_reg_mr", cerr)
	}
	return unsafe.Pointer(p), uint32(p.lkey), uint32(p.rkey), nil
}

// ibvDeregMR mirrors ibv_dereg_mr.
func ibvDeregMR(mr unsafe.Pointer) error {
	return errRet("ibv_dereg_mr", int(C.ibv_dereg_mr((*C.struct_ibv_mr)(mr))))
}

// ibvCreateCompChannel mirrors ibv_create_comp_channel.
func ibvCreateCompChannel(ctx unsafe.Pointer) (unsafe.Pointer, int, error) {
	ch, err := C.ibv_create_comp_channel((*C.struct_ibv_context)(ctx))
	if ch == nil {
		return nil, -1, errnoOf("ibv_create_comp_channel", err)
	}
	return unsafe.Pointer(ch), int(C.rb_comp_channel_fd(ch)), nil
}

// ibvDestroyCompChannel mirrors ibv_destroy_comp_channel.
func ibvDestroyCompChannel(ch unsafe.Pointer) error {
	return errRet("ibv_destroy_comp_channel", int(C.ibv_destroy_comp_channel((*C.struct_ibv_comp_channel)(ch))))
}

// ibvGetCQEvent mirrors ibv_get_cq_event; on a non-blocking channel with no
// event it fails with EAGAIN.
func ibvGetCQEvent(ch unsafe.Pointer) (unsafe.Pointer, error) {
	var cq *C.struct_ibv_cq
	var cqctx unsafe.Pointer
	rc, err := C.ibv_get_cq_event((*C.struct_ibv_comp_channel)(ch), &cq, &cqctx)
	if rc != 0 {
		return nil, errnoOf("ibv_get_cq_event", err)
	}
	return unsafe.Pointer(cq), nil
}

// ibvAckCQEvents mirrors ibv_ack_cq_events.
func ibvAckCQEvents(cq unsafe.Pointer, n int) {
	C.ibv_ack_cq_events((*C.struct_ibv_cq)(cq), C.uint(n))
}

// ibvCreateCQ mirrors ibv_create_cq.
func ibvCreateCQ(ctx unsafe.Pointer, cqe int, ch unsafe.Pointer) (unsafe.Pointer, error) {
	cq, err := C.ibv_create_cq((*C.struct_ibv_context)(ctx), C.int(cqe), nil, (*C.struct_ibv_comp_channel)(ch), 0)
	if cq == nil {
		return nil, errnoOf("ibv_create_cq", err)
	}
	return unsafe.Pointer(cq), nil
}

// ibvDestroyCQ mirrors ibv_destroy_cq.
func ibvDestroyCQ(cq unsafe.Pointer) error {
	return errRet("ibv_destroy_cq", int(C.ibv_destroy_cq((*C.struct_ibv_cq)(cq))))
}

// ibvReqNotifyCQ mirrors ibv_req_notify_cq.
func ibvReqNotifyCQ(cq unsafe.Pointer, solicitedOnly bool) error {
	s := C.int(0)
	if solicitedOnly {
		s = 1
	}
	return errRet("ibv_req_notify_cq", int(C.rb_req_notify_cq((*C.struct_ibv_cq)(cq), s)))
}

// ibvPollCQ mirrors ibv_poll_cq, converting into wc in the same crossing. It
// returns the count, or the negative value ibv_poll_cq returned.
func ibvPollCQ(cq unsafe.Pointer, wc []WorkCompletion) int {
	return int(C.rb_poll_cq((*C.struct_ibv_cq)(cq), C.int(len(wc)), (*C.struct_rb_wc)(unsafe.Pointer(unsafe.SliceData(wc)))))
}

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

// wcStatusStr mirrors ibv_wc_status_str.
func wcStatusStr(s WCStatus) string {
	return C.GoString(C.ibv_wc_status_str(C.enum_ibv_wc_status(s)))
}

func errnoOf(op string, err error) error {
	if e, ok := err.(syscall.Errno); ok {
		return errno(op, e)
	}
	return errno(op, syscall.EIO)
}

// memlockState reads RLIMIT_MEMLOCK (getrlimit) and whether the calling
// thread has CAP_IPC_LOCK (capget), which lifts the limit.
func memlockState() memlock {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		return memlock{}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return memlock{}
	}
	return memlock{known: true, cur: rl.Cur, max: rl.Max, ipcLock: data[0].Effective&(1<<unix.CAP_IPC_LOCK) != 0}
}

// mmapAnon maps size bytes of zeroed, populated anonymous memory.
func mmapAnon(size int) ([]byte, error) {
	return mmapPrivate(size, unix.MAP_POPULATE)
}

// mmapPrivate maps size bytes of zeroed anonymous memory with the extra
// flags. Every mapping here goes through MmapPtr and munmap's MunmapPtr,
// not unix.Mmap's bookkeeping, so that mmapTHP may trim a mapping.
func mmapPrivate(size, flags int) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|flags)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), size), nil
}

// mmapTHP maps size bytes (a multiple of align, the PMD huge page size)
// at an align boundary, asks for transparent huge pages there
// (madvise MADV_HUGEPAGE) and only then touches every page, so that each
// fault can take a whole huge page.
func mmapTHP(size, align int) ([]byte, error) {
	raw, err := mmapPrivate(size+align, 0)
	if err != nil {
		return nil, err
	}
	base := uintptr(unsafe.Pointer(&raw[0]))
	off := int((uintptr(align) - base%uintptr(align)) % uintptr(align))
	if off > 0 {
		_ = munmap(raw[:off])
	}
	if tail := raw[off+size:]; len(tail) > 0 {
		_ = munmap(tail)
	}
	mem := raw[off : off+size : off+size]
	if err := unix.Madvise(mem, unix.MADV_HUGEPAGE); err != nil {
		_ = munmap(mem)
		return nil, fmt.Errorf("madvise MADV_HUGEPAGE: %w", err)
	}
	for i := 0; i < size; i += os.Getpagesize() {
		mem[i] = 0
	}
	return mem, nil
}

// mmapHuge maps size bytes (a multiple of the huge page size) of zeroed,
// populated anonymous memory in huge pages of the default size.
func mmapHuge(size int) ([]byte, error) {
	return mmapPrivate(size, unix.MAP_POPULATE|unix.MAP_HUGETLB)
}

func munmap(b []byte) error {
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
}

func setNonblock(fd int) error { return unix.SetNonblock(fd, true) }

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
