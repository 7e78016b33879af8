// RDMA WRITE ping-pong (ib_write_lat) over RC or UC: each side busy-polls
// the last byte of its own buffer for the peer's write, then writes the
// next counter into the peer. Write with immediate, whose receiver waits
// on a receive completion instead, runs the receive-driven loop (send.c).
#include "loops.h"

// rb_wait_byte spins until the polled byte leaves its previous value, then
// checks that it is the expected counter: the loop measures what it claims
// only if every round trip's counter arrives, in order.
static inline int rb_wait_byte(rb_loop *l, uint8_t want) {
	uint8_t prev = (uint8_t)(want - 1), v;
	int64_t deadline = 0;
	uint32_t spins = 0;
	int rc;
	for (;;) {
		RB_MARK_TRY();
		if ((v = __atomic_load_n(l->poll, __ATOMIC_ACQUIRE)) != prev)
			break;
		if ((++spins & 1023) == 0 && (rc = rb_check(l, &deadline, RB_TIMEOUT_PEER, RB_STOP_PARK)))
			return rc;
	}
	RB_MARK_GOT();
	if (v != want) {
		l->got = v;
		l->want = want;
		return RB_ORDER;
	}
	return RB_OK;
}

// rb_write_ping is ib_write_lat's client turn rotated: write the next
// counter into the peer, poll the send completion, spin until the peer's
// answer lands.
static int write_ping(rb_loop *l, int64_t *rtt, int n) {
	int64_t t0 = rb_gap(l, rb_now());
	for (int i = 0; i < n; i++) {
		rb_extra_work(l);
#ifdef RB_EXTRA_DELAY_NS
		// Only make validate-ab defines this (through CGO_CFLAGS): a known
		// busy-wait per round trip, the real difference its A/B must find.
		for (int64_t d = rb_now() + RB_EXTRA_DELAY_NS; rb_now() < d;)
			;
#endif
		uint8_t c = (uint8_t)(l->cnt + 1);
		int rc = rb_send_next(l, c);
		if (rc)
			return rc;
		l->cnt = c;
		if ((rc = rb_wait_byte(l, c)))
			return rc;
		int64_t t1 = rb_now();
		rtt[i] = t1 - t0;
		t0 = rb_gap(l, t1);
	}
	return RB_OK;
}

int rb_write_ping(rb_loop *l, int64_t *rtt, int n) {
	RB_MARK_OPEN();
	int rc = write_ping(l, rtt, n);
	RB_MARK_CLOSE();
	return rc;
}

// rb_write_pong waits for the initiator's counter and writes the same
// counter back. The stop flag is also read once per round trip, so that an
// initiator that keeps writing cannot keep a stopped responder going.
static int write_pong(rb_loop *l, uint64_t max, uint64_t *done) {
	for (;;) {
		int rc;
		if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED) && (rc = rb_park(l)))
			return rc;
		uint8_t c = (uint8_t)(l->cnt + 1);
		rc = rb_wait_byte(l, c);
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

int rb_write_pong(rb_loop *l, uint64_t max, uint64_t *done) {
	RB_MARK_OPEN();
	int rc = write_pong(l, max, done);
	RB_MARK_CLOSE();
	return rc;
}
