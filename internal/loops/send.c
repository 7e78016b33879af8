// Receive-driven ping-pong: SEND and SEND with immediate (ib_send_lat,
// --send_with_imm) over RC, UC and UD, and RDMA WRITE with immediate
// (ib_write_lat --write_with_imm) over RC and UC. Each turn, as perftest's:
// poll the receive CQ (or wait for its event), repost the receive, post the
// send, poll the send CQ. The initiator sends first; the counter travels in
// the last payload byte (send) or as the immediate (both _imm forms).
#include "loops.h"

static int recv_ping(rb_loop *l, int64_t *rtt, int n) {
	int64_t t0 = rb_gap(l, rb_now());
	for (int i = 0; i < n; i++) {
		rb_extra_work(l);
		uint32_t c = (uint32_t)(l->cnt + 1);
		int rc = rb_send_next(l, c);
		if (rc)
			return rc;
		l->cnt = c;
		if ((rc = rb_take_recv(l, c)))
			return rc;
		int64_t t1 = rb_now();
		rtt[i] = t1 - t0;
		t0 = rb_gap(l, t1);
	}
	return RB_OK;
}

int rb_recv_ping(rb_loop *l, int64_t *rtt, int n) {
	RB_MARK_OPEN();
	int rc = recv_ping(l, rtt, n);
	RB_MARK_CLOSE();
	return rc;
}

static int recv_pong(rb_loop *l, uint64_t max, uint64_t *done) {
	for (;;) {
		int rc;
		if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED) && (rc = rb_park(l)))
			return rc;
		uint32_t c = (uint32_t)(l->cnt + 1);
		rc = rb_take_recv(l, c);
		if (rc == RB_STOPPED)
			continue; // parked, or told to end: rb_park decides
		if (rc)
			return rc;
		if ((rc = rb_send_next(l, c)))
			return rc;
		l->cnt = c;
		if (++*done == max)
			return RB_OK;
	}
}

int rb_recv_pong(rb_loop *l, uint64_t max, uint64_t *done) {
	RB_MARK_OPEN();
	int rc = recv_pong(l, max, done);
	RB_MARK_CLOSE();
	return rc;
}
