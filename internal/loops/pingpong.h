// The ping-pong turns that write.c and send.c share: the initiator sends
// the next counter and waits for the peer's answer; the responder waits for
// the initiator's counter and sends it back. What differs is the counter's
// type (the polled byte, or the 32-bit immediate), the wait for the peer's
// counter (the polled byte, or a receive completion), and whether the A/B
// build's delay applies. The turns are macros that write each loop out
// with its own type and wait, not inline functions taking them as
// arguments: those compiled to other register choices and block orders,
// while this compiles write.c and send.c to the instructions they had
// written out (their disassembly is unchanged, and so their user-insns/op).
#ifndef RB_PINGPONG_H
#define RB_PINGPONG_H

#include "loops.h"

// rb_extra_delay busy-waits RB_EXTRA_DELAY_NS where a build defines it:
// only make validate-ab does (through CGO_CFLAGS), a known busy-wait per
// round trip, the real difference its A/B must find.
static inline void rb_extra_delay(void) {
#ifdef RB_EXTRA_DELAY_NS
	for (int64_t d = rb_now() + RB_EXTRA_DELAY_NS; rb_now() < d;)
		;
#endif
}

// RB_DEFINE_PING defines int name(rb_loop *l, int64_t *rtt, int n), which
// runs n samples as the initiator: send the counter after the last, wait
// for the peer's answer with wait(l, counter), time the round trip; with
// delay 1, rb_extra_delay per round trip.
#define RB_DEFINE_PING(name, counter_t, wait, delay)            \
	static int name(rb_loop *l, int64_t *rtt, int n) {          \
		int64_t t0 = rb_gap(l, rb_now());                        \
		for (int i = 0; i < n; i++) {                            \
			rb_extra_work(l);                                    \
			if (delay)                                           \
				rb_extra_delay();                                \
			counter_t c = (counter_t)(l->cnt + 1);               \
			int rc = rb_send_next(l, c);                         \
			if (rc)                                              \
				return rc;                                       \
			l->cnt = c;                                          \
			if ((rc = wait(l, c)))                               \
				return rc;                                       \
			int64_t t1 = rb_now();                               \
			rtt[i] = t1 - t0;                                    \
			t0 = rb_gap(l, t1);                                  \
		}                                                        \
		return RB_OK;                                            \
	}

// RB_DEFINE_PONG defines int name(rb_loop *l, uint64_t max, uint64_t
// *done), which answers as the responder until max round trips (0: no
// limit) or a stop: wait for the initiator's counter, send it back. The
// stop flag is also read once per round trip, so that an initiator that
// keeps sending cannot keep a stopped responder going.
#define RB_DEFINE_PONG(name, counter_t, wait)                                    \
	static int name(rb_loop *l, uint64_t max, uint64_t *done) {                 \
		for (;;) {                                                               \
			int rc;                                                              \
			if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED) && (rc = rb_park(l))) \
				return rc;                                                       \
			counter_t c = (counter_t)(l->cnt + 1);                               \
			rc = wait(l, c);                                                     \
			if (rc == RB_STOPPED)                                                \
				continue; /* parked, or told to end: rb_park decides */          \
			if (rc)                                                              \
				return rc;                                                       \
			if ((rc = rb_send_next(l, c)))                                       \
				return rc;                                                       \
			l->cnt = c;                                                          \
			if (++*done == max)                                                  \
				return RB_OK;                                                    \
		}                                                                        \
	}

#endif
