//go:build cgo && linux

package rdmalat

/*
#cgo LDFLAGS: -libverbs
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

// The measured loop is C so that nothing of the Go runtime (preemption
// signals, stack checks, scheduler hand-offs) runs inside a round trip;
// shared/FACTS.md has the measurements that chose this. Go calls it once
// per chunk of samples and records them after it returns.

enum {
	RB_OK = 0,
	RB_STOPPED,       // the stop flag was raised
	RB_TIMEOUT_CQ,    // no send completion within idle_ns
	RB_TIMEOUT_PEER,  // the peer did not answer within idle_ns
	RB_POST,          // ibv_post_send failed: err
	RB_POLL,          // ibv_poll_cq failed: err
	RB_WC,            // a completion with an error status: err
	RB_ORDER,         // the peer's counter was not the expected one
};

typedef struct {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_sge sge;           // local send half
	struct ibv_send_wr wr;
	volatile uint8_t *poll;       // last byte of this size in the receive half
	uint8_t *post;                // last byte of this size in the send half
	uint8_t cnt;                  // last counter sent (initiator) or answered (responder)
	int32_t stop;                 // raised by Go (atomically): RB_STOP_FINISH or RB_STOP_NOW
	int64_t idle_ns;              // longest wait for the peer or a completion
	int32_t err;
	uint8_t got, want;
} rb_lat;

static inline int64_t rb_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Stop levels. RB_STOP_FINISH ends a loop at its next wait for the peer's
// counter, so that a write already posted completes and is counted (a
// responder told to stop once the initiator has seen its last answer, which
// lands before the responder polls its completion). RB_STOP_NOW also ends
// a wait for a send completion.
enum { RB_STOP_FINISH = 1, RB_STOP_NOW = 2 };

// rb_check is called every 1024 spins: it ends a wait that has lasted
// past the deadline or that Go asked to stop (at level or above). The clock
// is read only here, never per spin.
static inline int rb_check(rb_lat *l, int64_t *deadline, int timeout_code, int32_t level) {
	if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED) >= level)
		return RB_STOPPED;
	int64_t now = rb_now();
	if (*deadline == 0)
		*deadline = now + l->idle_ns;
	else if (now > *deadline)
		return timeout_code;
	return RB_OK;
}

static inline int rb_wait_send(rb_lat *l) {
	struct ibv_wc wc;
	int64_t deadline = 0;
	uint32_t spins = 0;
	int n, rc;
	while ((n = ibv_poll_cq(l->cq, 1, &wc)) == 0)
		if ((++spins & 1023) == 0 && (rc = rb_check(l, &deadline, RB_TIMEOUT_CQ, RB_STOP_NOW)))
			return rc;
	if (n < 0) {
		l->err = n;
		return RB_POLL;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		l->err = wc.status;
		return RB_WC;
	}
	return RB_OK;
}

// rb_wait_byte spins until the polled byte leaves its previous value, then
// checks that it is the expected counter: the loop measures what it claims
// only if every round trip's counter arrives, in order.
static inline int rb_wait_byte(rb_lat *l, uint8_t want) {
	uint8_t prev = (uint8_t)(want - 1), v;
	int64_t deadline = 0;
	uint32_t spins = 0;
	int rc;
	while ((v = __atomic_load_n(l->poll, __ATOMIC_ACQUIRE)) == prev)
		if ((++spins & 1023) == 0 && (rc = rb_check(l, &deadline, RB_TIMEOUT_PEER, RB_STOP_FINISH)))
			return rc;
	if (v != want) {
		l->got = v;
		l->want = want;
		return RB_ORDER;
	}
	return RB_OK;
}

static inline int rb_send_next(rb_lat *l, uint8_t c) {
	struct ibv_send_wr *bad;
	*l->post = c;
	int rc = ibv_post_send(l->qp, &l->wr, &bad);
	if (rc) {
		l->err = rc;
		return RB_POST;
	}
	return rb_wait_send(l);
}

// rb_write_ping runs n round trips as the initiator, ib_write_lat's client
// turn rotated: write the next counter into the peer, poll the send
// completion, spin until the peer's answer lands. rtt[i] is the time from
// one post to the next, like perftest's tposted[i+1] - tposted[i]; one
// clock read per sample.
static int rb_write_ping(rb_lat *l, int64_t *rtt, int n) {
	int64_t t0 = rb_now();
	for (int i = 0; i < n; i++) {
		uint8_t c = (uint8_t)(l->cnt + 1);
		int rc = rb_send_next(l, c);
		if (rc)
			return rc;
		l->cnt = c;
		if ((rc = rb_wait_byte(l, c)))
			return rc;
		int64_t t1 = rb_now();
		rtt[i] = t1 - t0;
		t0 = t1;
	}
	return RB_OK;
}

// rb_write_pong answers the initiator until stopped or until max round
// trips (0: no limit): wait for its counter, write the same counter back.
// The stop flag is also read once per round trip, so that an initiator
// that keeps writing cannot keep a stopped responder going.
static int rb_write_pong(rb_lat *l, uint64_t max, uint64_t *done) {
	for (;;) {
		if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED))
			return RB_STOPPED;
		uint8_t c = (uint8_t)(l->cnt + 1);
		int rc = rb_wait_byte(l, c);
		if (rc)
			return rc;
		if ((rc = rb_send_next(l, c)))
			return rc;
		l->cnt = c;
		if (++*done == max)
			return RB_OK;
	}
}

static void rb_setup(rb_lat *l, struct ibv_qp *qp, struct ibv_cq *cq,
		uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		uint32_t size, int inl, uint8_t *post, uint8_t *poll, int64_t idle_ns) {
	memset(l, 0, sizeof *l);
	l->qp = qp;
	l->cq = cq;
	l->sge.addr = laddr;
	l->sge.length = size;
	l->sge.lkey = lkey;
	l->wr.sg_list = &l->sge;
	l->wr.num_sge = 1;
	l->wr.opcode = IBV_WR_RDMA_WRITE;
	l->wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
	l->wr.wr.rdma.remote_addr = raddr;
	l->wr.wr.rdma.rkey = rkey;
	l->post = post;
	l->poll = poll;
	l->idle_ns = idle_ns;
}

// rb_clock_cost returns the time n back-to-back clock reads take, for the
// stated cost of a sample's measurement.
static int64_t rb_clock_cost(int n) {
	int64_t t0 = rb_now();
	for (int i = 0; i < n; i++)
		(void)rb_now();
	return rb_now() - t0;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// cLoop is one side's state for the C loop, in C memory: C keeps pointers
// to it for the whole of a responder's run, and Go raises its stop flag
// while C reads it.
type cLoop struct {
	l  *C.rb_lat
	ep *Endpoint
}

func newCLoop(ep *Endpoint, remote PeerInfo, size int, timeout time.Duration) (*cLoop, error) {
	if ep.remote == nil {
		return nil, fmt.Errorf("rdmalat: endpoint not connected")
	}
	if size < 1 || size > ep.cfg.MaxSize || size > remote.Size {
		return nil, fmt.Errorf("rdmalat: size %d outside 1..%d", size, min(ep.cfg.MaxSize, remote.Size))
	}
	buf := ep.mr.Bytes()
	clear(buf)
	half := ep.cfg.MaxSize
	inl := 0
	if size <= ep.InlineMax() {
		inl = 1
	}
	l := (*C.rb_lat)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_lat{}))))
	C.rb_setup(l, (*C.struct_ibv_qp)(ep.qp.CPointer()), (*C.struct_ibv_cq)(ep.cq.CPointer()),
		C.uint64_t(ep.mr.Addr()), C.uint32_t(ep.mr.LKey()),
		C.uint64_t(remote.Addr), C.uint32_t(remote.RKey),
		C.uint32_t(size), C.int(inl),
		(*C.uint8_t)(unsafe.Pointer(&buf[size-1])), (*C.uint8_t)(unsafe.Pointer(&buf[half+size-1])),
		C.int64_t(timeout.Nanoseconds()))
	return &cLoop{l: l, ep: ep}, nil
}

// stop ends the loop at once, wherever it waits.
func (c *cLoop) stop() { atomic.StoreInt32((*int32)(unsafe.Pointer(&c.l.stop)), C.RB_STOP_NOW) }

// finish ends the loop at its next wait for the peer's counter: an answer
// already posted completes and is counted first.
func (c *cLoop) finish() {
	atomic.CompareAndSwapInt32((*int32)(unsafe.Pointer(&c.l.stop)), 0, C.RB_STOP_FINISH)
}

func (c *cLoop) free() {
	if c.l != nil {
		C.free(unsafe.Pointer(c.l))
		c.l = nil
	}
}

// ping runs len(rtt) round trips as the initiator.
func (c *cLoop) ping(rtt []int64) error {
	rc := C.rb_write_ping(c.l, (*C.int64_t)(unsafe.Pointer(&rtt[0])), C.int(len(rtt)))
	runtime.KeepAlive(c.ep)
	return c.err(rc)
}

// pong answers until stopped or max round trips (0: until stopped). A stop
// is the normal end and returns nil.
func (c *cLoop) pong(max uint64) (uint64, error) {
	var done C.uint64_t
	rc := C.rb_write_pong(c.l, C.uint64_t(max), &done)
	runtime.KeepAlive(c.ep)
	if rc == C.RB_STOPPED {
		rc = C.RB_OK
	}
	return uint64(done), c.err(rc)
}

func (c *cLoop) err(rc C.int) error {
	timeout := time.Duration(c.l.idle_ns)
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
		return fmt.Errorf("rdmalat: ibv_post_send: %w", errnoErr(int(c.l.err)))
	case C.RB_POLL:
		return fmt.Errorf("rdmalat: ibv_poll_cq returned %d", int(c.l.err))
	case C.RB_WC:
		return fmt.Errorf("rdmalat: work completion failed: %s", C.GoString(C.ibv_wc_status_str(uint32(c.l.err))))
	case C.RB_ORDER:
		return fmt.Errorf("%w: got counter %d, want %d", ErrOrder, uint8(c.l.got), uint8(c.l.want))
	}
	return fmt.Errorf("rdmalat: C loop returned %d", int(rc))
}

// ClockCost returns the cost in nanoseconds of one clock read in the
// measured loop (clock_gettime(CLOCK_MONOTONIC)), the only measurement
// work done there per sample, averaged over n reads.
func ClockCost(n int) float64 {
	return float64(C.rb_clock_cost(C.int(n))) / float64(n)
}
