//go:build cgo && linux

package loops

/*
#cgo CFLAGS: -O2 -Wall -Wextra -Werror
#cgo LDFLAGS: -libverbs
#cgo noescape rb_setup
#cgo nocallback rb_setup
#cgo noescape rb_fill_recv
#cgo nocallback rb_fill_recv
#cgo noescape rb_arm
#cgo nocallback rb_arm
#cgo noescape rb_events_begin
#cgo nocallback rb_events_begin
#cgo noescape rb_events_end
#cgo nocallback rb_events_end
#include <stdlib.h>
#include "loops.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// Loop is one side's loop, its state in C memory: C keeps pointers to it
// for the whole of a responder's run, and Go raises its stop flag while C
// reads it. The verbs objects it was built from must stay open until Free.
type Loop struct {
	l      *C.rb_loop
	cfg    Config // keeps the verbs objects reachable while C uses them
	parkFD int    // eventfd a parked responder sleeps on; -1: none
}

// New builds a loop for cfg: the work requests, the receives topped up to
// cfg.RxDepth and, with events, the CQs armed once. The side's buffer is
// zeroed first (perftest zeroes its buffers: a stale counter in the polled
// byte would end a wait early).
func New(cfg Config) (*Loop, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	buf := cfg.MR.Bytes()
	clear(buf)
	var p C.rb_params
	p.qp = (*C.struct_ibv_qp)(rdmacore.Pointer(cfg.QP))
	p.scq = (*C.struct_ibv_cq)(rdmacore.Pointer(cfg.SendCQ))
	if cfg.RecvCQ != nil {
		p.rcq = (*C.struct_ibv_cq)(rdmacore.Pointer(cfg.RecvCQ))
	}
	if cfg.Events {
		p.events = 1
		p.sch = (*C.struct_ibv_comp_channel)(rdmacore.Pointer(cfg.SendChannel))
		if cfg.RecvChannel != nil {
			p.rch = (*C.struct_ibv_comp_channel)(rdmacore.Pointer(cfg.RecvChannel))
		}
	}
	p.op = C.int32_t(cfg.Op)
	if cfg.Transport == spec.UD {
		p.ud = 1
		p.ah = (*C.struct_ibv_ah)(rdmacore.Pointer(cfg.AH))
		p.rqpn = C.uint32_t(cfg.RemoteQPN)
		p.qkey = UDQKey
	}
	if cfg.Inline && cfg.Op.Inline() {
		p.inl = 1
	}
	p.base = (*C.uint8_t)(unsafe.Pointer(&buf[0]))
	p.lkey = C.uint32_t(cfg.MR.LKey())
	p.send_off, p.recv_off = C.uint32_t(cfg.Send), C.uint32_t(cfg.Recv)
	p.recv_len, p.size = C.uint32_t(cfg.RecvLen), C.uint32_t(cfg.Size)
	if ShortRecvForTest > 0 && cfg.RecvLen > 0 {
		p.recv_len = C.uint32_t(ShortRecvForTest)
	}
	p.raddr, p.rkey = C.uint64_t(cfg.RemoteAddr), C.uint32_t(cfg.RKey)
	if cfg.Op.Receives() {
		p.rx_depth, p.posted = C.int32_t(cfg.RxDepth), C.int32_t(cfg.Posted)
		p.repost_below = C.int32_t(cfg.RepostBelow)
	}
	p.idle_ns = C.int64_t(cfg.Timeout.Nanoseconds())
	p.gap_ns = C.int64_t(cfg.Gap.Nanoseconds())
	lp := &Loop{l: (*C.rb_loop)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_loop{})))), cfg: cfg, parkFD: -1}
	C.rb_setup(lp.l, &p)
	var rc C.int
	if cfg.Op.Receives() {
		rc = C.rb_fill_recv(lp.l)
	}
	if rc == C.RB_OK && cfg.Events {
		rc = C.rb_arm(lp.l)
	}
	runtime.KeepAlive(lp)
	if err := lp.err(rc, ""); err != nil {
		// The receives posted so far stay on the QP: Posted says how many.
		return lp, fmt.Errorf("setting up the %v loop: %w", cfg.Op, err)
	}
	return lp, nil
}

// The C loops switch on spec.Op's values (RB_OP_*): if either side
// changes, these fail to compile (a constant index out of range).
var (
	_ = [1]struct{}{}[C.RB_OP_WRITE-spec.Write]
	_ = [1]struct{}{}[C.RB_OP_READ-spec.Read]
	_ = [1]struct{}{}[C.RB_OP_SEND-spec.Send]
	_ = [1]struct{}{}[C.RB_OP_WRITE_IMM-spec.WriteImm]
	_ = [1]struct{}{}[C.RB_OP_FETCH_ADD-spec.FetchAdd]
	_ = [1]struct{}{}[C.RB_OP_COMPARE_SWAP-spec.CompareSwap]
	_ = [1]struct{}{}[C.RB_OP_SEND_IMM-spec.SendImm]
)

// SkewCounter adds d to the counter the loop sends next, and
// SetExtraWork makes each operation of the initiator's loop execute about
// 2n more instructions: the known extra work that tests of the work
// metrics must find (internal/work). 0, the default, adds none.
func (lp *Loop) SetExtraWork(n uint32) { lp.l.extra = C.uint32_t(n) }

// ExpectSource changes the QPN every UD receive must come from: for tests
// that prove the loops' checks fail when what arrives is not what they
// expect. Call either before the loop runs.
func (lp *Loop) SkewCounter(d uint64) { lp.l.cnt += C.uint64_t(d) }

// ExpectSource: see SkewCounter.
func (lp *Loop) ExpectSource(qpn uint32) { lp.l.src_qpn = C.uint32_t(qpn) }

// Posted returns the receives outstanding on the queue pair: pass it as
// Config.Posted to the next loop on the same queue pair.
func (lp *Loop) Posted() int {
	if lp == nil || lp.l == nil {
		return 0
	}
	return int(lp.l.posted)
}

func (lp *Loop) stopFlag() *int32 { return (*int32)(unsafe.Pointer(&lp.l.stop)) }

// Stop ends the loop at once, wherever it waits.
func (lp *Loop) Stop() {
	atomic.StoreInt32(lp.stopFlag(), C.RB_STOP_NOW)
	lp.wake()
}

// Finish ends the loop at its next wait for the peer: an answer already
// posted completes and is counted first. A parked loop ends at once.
func (lp *Loop) Finish() {
	for {
		s := atomic.LoadInt32(lp.stopFlag())
		if s >= C.RB_STOP_FINISH || atomic.CompareAndSwapInt32(lp.stopFlag(), s, C.RB_STOP_FINISH) {
			break
		}
	}
	lp.wake()
}

// EnableParking gives a responder's loop the eventfd it sleeps on while
// parked (Park). Call it before the loop runs; Free closes it.
func (lp *Loop) EnableParking() error {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("rdmalat: eventfd for turn-taking: %w", err)
	}
	lp.parkFD = fd
	lp.l.park_fd = C.int32_t(fd)
	return nil
}

// Park asks a responder's loop to sleep at its next wait for the peer,
// in read(2) on its eventfd: no thread spins until Unpark. Call it when
// no round trip is in flight; Parked says when the loop sleeps.
func (lp *Loop) Park() {
	atomic.CompareAndSwapInt32(lp.stopFlag(), 0, C.RB_STOP_PARK)
	lp.interrupt()
}

// Parked reports whether the loop sleeps in its park.
func (lp *Loop) Parked() bool { return atomic.LoadInt32((*int32)(unsafe.Pointer(&lp.l.parked))) == 1 }

// Unpark lets a parked loop answer again.
func (lp *Loop) Unpark() {
	atomic.CompareAndSwapInt32(lp.stopFlag(), C.RB_STOP_PARK, 0)
	lp.wake()
}

// wakeSignal is what interrupts an events loop's blocking wait (events.c).
var wakeSignal = unix.Signal(C.rb_wake_signal())

// interrupt signals the thread of an events loop blocked in
// ibv_get_cq_event, so that it looks at its flag now rather than at its
// next tick. Should the loop have just ended, the signal's handler does
// nothing wherever it lands.
func (lp *Loop) interrupt() {
	if tid := atomic.LoadInt32((*int32)(unsafe.Pointer(&lp.l.wake_tid))); tid != 0 {
		_ = unix.Tgkill(unix.Getpid(), int(tid), wakeSignal)
	}
}

// wake writes the eventfd, so that a parked loop looks at its flag again,
// and interrupts an events loop's wait.
func (lp *Loop) wake() {
	lp.interrupt()
	if lp.parkFD >= 0 {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(lp.parkFD, one[:])
	}
}

// Free releases the loop's C memory. The loop must have returned.
func (lp *Loop) Free() {
	if lp != nil && lp.l != nil {
		C.free(unsafe.Pointer(lp.l))
		lp.l = nil
		if lp.parkFD >= 0 {
			unix.Close(lp.parkFD)
			lp.parkFD = -1
		}
	}
}

// Ping runs len(rtt) samples as the initiator. It allocates nothing.
func (lp *Loop) Ping(rtt []int64) error {
	if len(rtt) == 0 {
		return nil
	}
	p := (*C.int64_t)(unsafe.Pointer(&rtt[0]))
	n := C.int(len(rtt))
	rc := lp.beginEvents()
	if rc != C.RB_OK {
		return lp.err(rc, "initiator")
	}
	defer lp.endEvents()
	switch lp.cfg.Op {
	case spec.Write:
		rc = pingWrite(lp.l, p, n)
	case spec.WriteImm, spec.Send, spec.SendImm:
		rc = pingRecv(lp.l, p, n)
	case spec.Read:
		rc = pingRead(lp.l, p, n)
	case spec.FetchAdd, spec.CompareSwap:
		rc = pingAtomic(lp.l, p, n)
	}
	runtime.KeepAlive(lp)
	return lp.err(rc, "initiator")
}

// Pong answers the initiator until stopped or max round trips (0: until
// stopped). A stop is the normal end and returns nil. The one-sided
// operations have no responder loop: their responder's CPU does nothing.
func (lp *Loop) Pong(max uint64) (uint64, error) {
	var done C.uint64_t
	rc := lp.beginEvents()
	if rc != C.RB_OK {
		return 0, lp.err(rc, "responder")
	}
	defer lp.endEvents()
	rc = C.RB_NO_LOOP
	switch lp.cfg.Op {
	case spec.Write:
		rc = pongWrite(lp.l, C.uint64_t(max), &done)
	case spec.WriteImm, spec.Send, spec.SendImm:
		rc = pongRecv(lp.l, C.uint64_t(max), &done)
	}
	runtime.KeepAlive(lp)
	if rc == C.RB_STOPPED {
		rc = C.RB_OK
	}
	return uint64(done), lp.err(rc, "responder")
}

// beginEvents readies an events loop's thread for blocking waits
// (events.c), locked to it until endEvents.
func (lp *Loop) beginEvents() C.int {
	if !lp.cfg.Events {
		return C.RB_OK
	}
	runtime.LockOSThread()
	rc := C.rb_events_begin(lp.l)
	if rc != C.RB_OK {
		runtime.UnlockOSThread()
	}
	return rc
}

// endEvents undoes a successful beginEvents.
func (lp *Loop) endEvents() {
	if lp.cfg.Events {
		C.rb_events_end(lp.l)
		runtime.UnlockOSThread()
	}
}

var eventSteps = map[C.uint64_t]string{C.RB_EV_GET: "ibv_get_cq_event", C.RB_EV_NOTIFY: "ibv_req_notify_cq", C.RB_EV_SETUP: "making the channel block (fcntl), the wake-up signal or its timer"}

// err turns a loop's return code into its error; role names the side
// whose loop it was ("initiator", "responder"; "" while setting up).
func (lp *Loop) err(rc C.int, role string) error {
	l := lp.l
	timeout := time.Duration(l.idle_ns)
	switch rc {
	case C.RB_OK:
		return nil
	case C.RB_STOPPED:
		return ErrStopped
	case C.RB_TIMEOUT_CQ:
		return fmt.Errorf("%w: no send completion within %v (RDMABENCH_TIMEOUT): the peer's QP may be gone or the path broken", ErrTimeout, timeout)
	case C.RB_TIMEOUT_PEER:
		return fmt.Errorf("%w: no answer from the peer within %v (RDMABENCH_TIMEOUT): it stopped or died", ErrTimeout, timeout)
	case C.RB_POST:
		return fmt.Errorf("rdmalat: ibv_post_send: %w", errno(l.err))
	case C.RB_POST_RECV:
		return fmt.Errorf("rdmalat: ibv_post_recv: %w", errno(l.err))
	case C.RB_POLL:
		return fmt.Errorf("rdmalat: ibv_poll_cq returned %d", int(l.err))
	case C.RB_WC:
		// The status matches with errors.Is(err, verbs.WCRetryExcErr) etc.
		return completionError(lp.cfg.Op, role, l.wc_recv != 0, verbs.WCStatus(l.err), uint32(l.vendor_err))
	case C.RB_EVENT:
		return fmt.Errorf("rdmalat: waiting for a completion event: %s: %w", eventSteps[l.got], errno(l.err))
	case C.RB_ORDER:
		return fmt.Errorf("%w: got counter %d, want %d", ErrOrder, uint64(l.got), uint64(l.want))
	case C.RB_NO_IMM:
		return fmt.Errorf("%w: a receive completion (opcode %d) carried no immediate data", ErrOrder, uint64(l.got))
	case C.RB_SOURCE:
		return fmt.Errorf("%w: a UD message came from QP %#x, not from the peer's QP %#x", ErrOrder, uint64(l.got), uint64(l.want))
	case C.RB_ATOMIC:
		return fmt.Errorf("%w: %v returned old value %d, want %d: the remote word changed under the test or the operation did not apply", ErrOrder, lp.cfg.Op, uint64(l.got), uint64(l.want))
	case C.RB_PARK_READ:
		return fmt.Errorf("rdmalat: a parked responder's read of its eventfd: %w", errno(l.err))
	case C.RB_NO_LOOP:
		return fmt.Errorf("rdmalat: %v is one-sided: its responder runs no loop", lp.cfg.Op)
	}
	return fmt.Errorf("rdmalat: C loop returned %d", int(rc))
}

func errno(n C.int32_t) error {
	if n < 0 {
		n = -n
	}
	return syscall.Errno(n)
}

// ClockCost returns the cost in nanoseconds of one clock read in the
// measured loops (clock_gettime(CLOCK_MONOTONIC)), the only measurement
// work done there per sample, averaged over n reads.
func ClockCost(n int) float64 {
	return float64(C.rb_clock_cost(C.int(n))) / float64(n)
}
