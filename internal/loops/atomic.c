// Atomics (ib_atomic_lat): FETCH_AND_ADD (add 1, perftest's default) or
// COMPARE_AND_SWAP on the responder's 8-byte word; the initiator alone
// posts one signaled operation and polls (or waits for) its completion; a
// sample is one operation's time, not halved. Each old value returned is
// checked: fetch-and-add must return the previous value, compare-and-swap
// compares with the value the word holds now and swaps in that value + 1,
// so every operation really swaps (perftest compares 0 and swaps 0, which
// swaps every time too but changes nothing).
#include "loops.h"

static inline uint64_t rb_bswap64(uint64_t v) { return __builtin_bswap64(v); }

// rb_encode is v as the device writes an old value into local memory:
// host order (rxe), or big-endian (some HCAs reply big-endian, as the wire
// carries it).
static inline uint64_t rb_encode(const rb_loop *l, uint64_t v) { return l->be ? rb_bswap64(v) : v; }

// rb_fetch_add posts one unmeasured fetch-and-add of add and returns the
// old value as it landed.
static int rb_fetch_add(rb_loop *l, uint64_t add, uint64_t *old) {
	l->wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	l->wr.wr.atomic.compare_add = add;
	int rc = rb_post(l);
	*old = *l->old;
	return rc;
}

// rb_atomic_sync learns, before the first sample of a loop, the remote
// word's value and the byte order old values come back in, with three
// unmeasured fetch-and-adds that leave the word as it was: add 0 (the raw
// value P), add 1 (returns P again), add 2^64-1 (returns the raw P + 1,
// in the device's order, and subtracts the 1 again).
static int rb_atomic_sync(rb_loop *l) {
	enum ibv_wr_opcode op = l->wr.opcode;
	uint64_t p, r, q;
	int rc;
	if ((rc = rb_fetch_add(l, 0, &p)) || (rc = rb_fetch_add(l, 1, &r)) || (rc = rb_fetch_add(l, ~(uint64_t)0, &q)))
		return rc;
	l->wr.opcode = op;
	l->wr.wr.atomic.compare_add = 1; // fetch-and-add's; compare-and-swap sets its own per operation
	if (r != p) {
		l->got = r;
		l->want = p;
		return RB_ATOMIC;
	}
	if (q == p + 1) {
		l->be = 0;
		l->cnt = p;
	} else if (rb_bswap64(q) == rb_bswap64(p) + 1) {
		l->be = 1;
		l->cnt = rb_bswap64(p);
	} else {
		l->got = q;
		l->want = p + 1;
		return RB_ATOMIC;
	}
	l->atomic_synced = 1;
	return RB_OK;
}

static int atomic_ping(rb_loop *l, int64_t *rtt, int n) {
	int rc;
	int cas = l->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
	int64_t t0 = rb_gap(l, rb_now());
	for (int i = 0; i < n; i++) {
		rb_extra_work(l);
		uint64_t want = l->cnt;
		if (cas) {
			l->wr.wr.atomic.compare_add = want;
			l->wr.wr.atomic.swap = want + 1;
		}
		if ((rc = rb_post(l)))
			return rc;
		uint64_t got = *l->old;
		if (got != rb_encode(l, want)) {
			l->got = l->be ? rb_bswap64(got) : got;
			l->want = want;
			return RB_ATOMIC;
		}
		l->cnt = want + 1;
		int64_t t1 = rb_now();
		rtt[i] = t1 - t0;
		t0 = rb_gap(l, t1);
	}
	return RB_OK;
}

int rb_atomic_ping(rb_loop *l, int64_t *rtt, int n) {
	int rc;
	if (!l->atomic_synced && (rc = rb_atomic_sync(l)))
		return rc;
	RB_MARK_OPEN();
	rc = atomic_ping(l, rtt, n);
	RB_MARK_CLOSE();
	return rc;
}
