// C wrappers of package verbs (included by the preambles of the ibv_*_cgo.go files only):
// each bundles a few libibverbs calls into one cgo crossing, or calls what
// libibverbs defines as a macro or inline function.

#ifndef RDMABENCH_VERBS_IBV_H
#define RDMABENCH_VERBS_IBV_H

#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// rb_wc is the work completion as Go's WorkCompletion lays it out.
struct rb_wc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t flags;
	uint32_t vendor_err;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t  sl;
	uint8_t  pad[3];
};

// rb_poll_cq polls up to n completions into out, converting each; one
// crossing whatever n is.
static int rb_poll_cq(struct ibv_cq *cq, int n, struct rb_wc *out) {
	struct ibv_wc wc[16];
	int total = 0;
	while (total < n) {
		int want = n - total;
		if (want > 16)
			want = 16;
		int got = ibv_poll_cq(cq, want, wc);
		if (got < 0)
			return total > 0 ? total : got;
		for (int i = 0; i < got; i++) {
			struct rb_wc *o = &out[total + i];
			o->wr_id = wc[i].wr_id;
			o->status = wc[i].status;
			o->opcode = wc[i].opcode;
			o->byte_len = wc[i].byte_len;
			o->imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc[i].imm_data) : 0;
			o->qp_num = wc[i].qp_num;
			o->src_qp = wc[i].src_qp;
			o->flags = wc[i].wc_flags;
			o->vendor_err = wc[i].vendor_err;
			o->pkey_index = wc[i].pkey_index;
			o->slid = wc[i].slid;
			o->sl = wc[i].sl;
			o->pad[0] = o->pad[1] = o->pad[2] = 0;
		}
		total += got;
		if (got < want)
			break;
	}
	return total;
}

// rb_post_send builds one ibv_send_wr on the C stack and posts it. It
// returns ibv_post_send's result: 0 or an errno value.
static int rb_post_send(struct ibv_qp *qp, uint64_t id, uint32_t opcode, uint32_t flags,
		uint64_t addr, uint32_t length, uint32_t lkey,
		uint64_t remote_addr, uint32_t rkey, uint32_t imm,
		uint64_t compare_add, uint64_t swap,
		struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey) {
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = length > 0 ? 1 : 0;
	wr.opcode = opcode;
	wr.send_flags = flags;
	wr.imm_data = htonl(imm);
	switch (opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr.wr.atomic.remote_addr = remote_addr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = compare_add;
		wr.wr.atomic.swap = swap;
		break;
	default:
		if (ah != NULL) {
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = remote_qpn;
			wr.wr.ud.remote_qkey = remote_qkey;
		} else {
			wr.wr.rdma.remote_addr = remote_addr;
			wr.wr.rdma.rkey = rkey;
		}
	}
	return ibv_post_send(qp, &wr, &bad);
}

// rb_post_recv posts one receive of one scatter entry.
static int rb_post_recv(struct ibv_qp *qp, uint64_t id, uint64_t addr, uint32_t length, uint32_t lkey) {
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };
	struct ibv_recv_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = length > 0 ? 1 : 0;
	return ibv_post_recv(qp, &wr, &bad);
}

static int rb_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	return ibv_req_notify_cq(cq, solicited_only);
}

// ibv_get_device_list, ibv_query_port and ibv_reg_mr are macros: cgo calls
// these functions instead.
static struct ibv_device **rb_get_device_list(int *n) { return ibv_get_device_list(n); }
static int rb_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr) {
	return ibv_query_port(ctx, port, attr);
}
static struct ibv_mr *rb_reg_mr(struct ibv_pd *pd, uint64_t addr, size_t length, int access) {
	return ibv_reg_mr(pd, (void *)(uintptr_t)addr, length, access);
}
static enum ibv_node_type rb_device_node_type(struct ibv_device *dev) { return dev->node_type; }
static struct ibv_device *rb_device_at(struct ibv_device **list, int i) { return list[i]; }
static int rb_comp_channel_fd(struct ibv_comp_channel *ch) { return ch->fd; }

// rb_probe_max_inline finds the largest inline size a QP of this type
// accepts on this device, stepping down from 4096, and returns what the
// device reports back (or -errno when even 0 fails).
static int rb_probe_max_inline(struct ibv_context *ctx, int qp_type) {
	static const uint32_t sizes[] = { 4096, 2048, 1024, 512, 256, 128, 64, 32, 0 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	if (!pd)
		return -errno;
	struct ibv_cq *cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!cq) {
		int e = errno;
		ibv_dealloc_pd(pd);
		return -e;
	}
	int result = -EINVAL;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct ibv_qp_init_attr a;
		memset(&a, 0, sizeof a);
		a.send_cq = cq;
		a.recv_cq = cq;
		a.qp_type = qp_type;
		a.cap.max_send_wr = 1;
		a.cap.max_recv_wr = 1;
		a.cap.max_send_sge = 1;
		a.cap.max_recv_sge = 1;
		a.cap.max_inline_data = sizes[i];
		struct ibv_qp *qp = ibv_create_qp(pd, &a);
		if (qp) {
			result = a.cap.max_inline_data > sizes[i] ? a.cap.max_inline_data : sizes[i];
			ibv_destroy_qp(qp);
			break;
		}
		result = errno ? -errno : -EIO; // some providers fail without errno
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return result;
}

// rb_layout describes struct rb_wc and a few enum values, for a test that
// checks the Go mirror.
static size_t rb_layout(int i) {
	switch (i) {
	case 0: return sizeof(struct rb_wc);
	case 1: return offsetof(struct rb_wc, status);
	case 2: return offsetof(struct rb_wc, byte_len);
	case 3: return offsetof(struct rb_wc, imm);
	case 4: return offsetof(struct rb_wc, flags);
	case 5: return offsetof(struct rb_wc, vendor_err);
	case 6: return offsetof(struct rb_wc, pkey_index);
	case 7: return offsetof(struct rb_wc, sl);
	}
	return 0;
}

#endif
