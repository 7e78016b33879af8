// RDMA WRITE ping-pong (ib_write_lat) over RC or UC: each side busy-polls
// the last byte of its own buffer for the peer's write, then writes the
// next counter into the peer. Write with immediate, whose receiver waits
// on a receive completion instead, runs the receive-driven loop (send.c).
#include "pingpong.h"

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
// answer lands. The counter is the polled byte: 8 bits wide.
RB_DEFINE_PING(write_ping, uint8_t, rb_wait_byte, 1)

int rb_write_ping(rb_loop *l, int64_t *rtt, int n) {
	RB_MARK_OPEN();
	int rc = write_ping(l, rtt, n);
	RB_MARK_CLOSE();
	return rc;
}

// rb_write_pong waits for the initiator's counter and writes the same
// counter back.
RB_DEFINE_PONG(write_pong, uint8_t, rb_wait_byte)

int rb_write_pong(rb_loop *l, uint64_t max, uint64_t *done) {
	RB_MARK_OPEN();
	int rc = write_pong(l, max, done);
	RB_MARK_CLOSE();
	return rc;
}
