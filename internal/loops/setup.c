// Setup work done outside any measurement.
#include "loops.h"

// rb_setup fills the loop's work requests for p->op: one send work request
// (signaled, inline where p->inl says so) and, for the operations that
// receive, one receive work request reposted after each completion.
void rb_setup(rb_loop *l, const rb_params *p) {
	memset(l, 0, sizeof *l);
	l->park_fd = -1;
	l->qp = p->qp;
	l->scq = p->scq;
	l->rcq = p->rcq;
	l->events = p->events;
	if (p->events) {
		l->sch = p->sch;
		l->rch = p->rch;
	}
	l->rx_depth = p->rx_depth;
	l->posted = p->posted;
	l->repost_below = p->repost_below;
	l->idle_ns = p->idle_ns;
	l->gap_ns = p->gap_ns;
#ifdef RB_EXTRA_INSNS
	l->extra = RB_EXTRA_INSNS;
#endif
	l->sge.addr = (uintptr_t)(p->base + p->send_off);
	l->sge.length = p->size;
	l->sge.lkey = p->lkey;
	l->wr.sg_list = &l->sge;
	l->wr.num_sge = 1;
	l->wr.send_flags = IBV_SEND_SIGNALED | (p->inl ? IBV_SEND_INLINE : 0);
	l->post = p->base + p->send_off + p->size - 1;
	l->poll = p->base + p->recv_off + p->size - 1;
	l->rlast = l->poll;
	switch (p->op) {
	case RB_OP_WRITE:
		l->wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case RB_OP_WRITE_IMM:
		l->wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		l->imm = 1;
		break;
	case RB_OP_SEND:
		l->wr.opcode = IBV_WR_SEND;
		break;
	case RB_OP_SEND_IMM:
		l->wr.opcode = IBV_WR_SEND_WITH_IMM;
		l->imm = 1;
		break;
	case RB_OP_READ:
		l->wr.opcode = IBV_WR_RDMA_READ;
		break;
	case RB_OP_FETCH_ADD:
		l->wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		break;
	case RB_OP_COMPARE_SWAP:
		l->wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		break;
	}
	switch (p->op) {
	case RB_OP_WRITE:
	case RB_OP_WRITE_IMM:
	case RB_OP_READ:
		l->wr.wr.rdma.remote_addr = p->raddr;
		l->wr.wr.rdma.rkey = p->rkey;
		break;
	case RB_OP_FETCH_ADD:
	case RB_OP_COMPARE_SWAP:
		l->wr.wr.atomic.remote_addr = p->raddr;
		l->wr.wr.atomic.rkey = p->rkey;
		l->wr.wr.atomic.compare_add = 1;
		l->old = (volatile uint64_t *)(p->base + p->send_off);
		break;
	case RB_OP_SEND:
	case RB_OP_SEND_IMM:
		if (p->ud) {
			l->wr.wr.ud.ah = p->ah;
			l->wr.wr.ud.remote_qpn = p->rqpn;
			l->wr.wr.ud.remote_qkey = p->qkey;
			l->src_qpn = p->rqpn;
		}
		break;
	}
	if (p->op == RB_OP_SEND || p->op == RB_OP_SEND_IMM || p->op == RB_OP_WRITE_IMM) {
		if (p->recv_len > 0) {
			// On UD the device writes the 40-byte GRH first, just before
			// the payload.
			l->rsge.addr = (uintptr_t)(p->base + p->recv_off - (p->ud ? 40 : 0));
			l->rsge.length = p->recv_len;
			l->rsge.lkey = p->lkey;
			l->rwr.sg_list = &l->rsge;
			l->rwr.num_sge = 1;
		}
		// else a zero-length receive: WRITE with immediate places its
		// data by RDMA and consumes the receive only for the immediate.
	}
}

// rb_fill_recv tops the posted receives up to rx_depth, all the same work
// request on one buffer, as perftest pre-posts them.
int rb_fill_recv(rb_loop *l) {
	while (l->posted < l->rx_depth) {
		int rc = rb_repost(l);
		if (rc)
			return rc;
	}
	return RB_OK;
}

// rb_arm requests the next completion event on each CQ the loop waits on,
// once: after that each event wait re-arms its CQ.
int rb_arm(rb_loop *l) {
	int rc;
	if (l->scq && (rc = ibv_req_notify_cq(l->scq, 0))) {
		l->err = rc;
		l->got = RB_EV_NOTIFY;
		return RB_EVENT;
	}
	if (l->rcq && l->rcq != l->scq && (rc = ibv_req_notify_cq(l->rcq, 0))) {
		l->err = rc;
		l->got = RB_EV_NOTIFY;
		return RB_EVENT;
	}
	return RB_OK;
}

// rb_clock_cost returns the time n back-to-back clock reads take, for the
// stated cost of a sample's measurement.
int64_t rb_clock_cost(int n) {
	int64_t t0 = rb_now();
	for (int i = 0; i < n; i++)
		(void)rb_now();
	return rb_now() - t0;
}
