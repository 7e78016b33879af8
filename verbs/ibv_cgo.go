//go:build linux && cgo

package verbs

// The ibv_*_cgo.go files are the package's only boundary with C: one
// unexported Go function per libibverbs call (or per C wrapper that bundles
// a few of them into one crossing, in ibv.h), named after it, a file per
// kind of object (ibv_device_cgo.go: devices and protection domains;
// ibv_memory_cgo.go, ibv_cq_cgo.go, ibv_qp_cgo.go). This one holds the
// link flag and what they share. The rest of the package is pure Go.

/*
#cgo LDFLAGS: -libverbs

#include "ibv.h"
*/
import "C"

import "syscall"

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
