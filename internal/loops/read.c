// RDMA READ (ib_read_lat): the initiator alone posts one signaled READ and
// polls (or waits for) its completion; a sample is one READ's time, not
// halved. The responder's CPU takes no part.
#include "loops.h"

static int read_ping(rb_loop *l, int64_t *rtt, int n) {
	int64_t t0 = rb_gap(l, rb_now());
	for (int i = 0; i < n; i++) {
		rb_extra_work(l);
		int rc = rb_post(l);
		if (rc)
			return rc;
		int64_t t1 = rb_now();
		rtt[i] = t1 - t0;
		t0 = rb_gap(l, t1);
	}
	return RB_OK;
}

int rb_read_ping(rb_loop *l, int64_t *rtt, int n) {
	RB_MARK_OPEN();
	int rc = read_ping(l, rtt, n);
	RB_MARK_CLOSE();
	return rc;
}
