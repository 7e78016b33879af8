// Receive-driven ping-pong: SEND and SEND with immediate (ib_send_lat,
// --send_with_imm) over RC, UC and UD, and RDMA WRITE with immediate
// (ib_write_lat --write_with_imm) over RC and UC. Each turn, as perftest's:
// poll the receive CQ (or wait for its event), repost the receive, post the
// send, poll the send CQ. The initiator sends first; the counter travels in
// the last payload byte (send) or as the immediate (both _imm forms).
#include "pingpong.h"

// The counter is 32 bits wide: the immediate carries it whole (the
// payload's last byte its low 8).
RB_DEFINE_PING(recv_ping, uint32_t, rb_take_recv, 0)

int rb_recv_ping(rb_loop *l, int64_t *rtt, int n) {
	RB_MARK_OPEN();
	int rc = recv_ping(l, rtt, n);
	RB_MARK_CLOSE();
	return rc;
}

RB_DEFINE_PONG(recv_pong, uint32_t, rb_take_recv)

int rb_recv_pong(rb_loop *l, uint64_t max, uint64_t *done) {
	RB_MARK_OPEN();
	int rc = recv_pong(l, max, done);
	RB_MARK_CLOSE();
	return rc;
}
