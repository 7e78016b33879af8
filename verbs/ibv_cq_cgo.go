//go:build linux && cgo

package verbs

// Completion queues, their channels and events, and polling.

/*
#cgo noescape rb_poll_cq
#cgo nocallback rb_poll_cq
#cgo noescape rb_req_notify_cq
#cgo nocallback rb_req_notify_cq
#include "ibv.h"
*/
import "C"

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

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

func setNonblock(fd int) error { return unix.SetNonblock(fd, true) }

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
