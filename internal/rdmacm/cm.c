//go:build linux && cgo

#include "cm.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

static int neg_errno(void) { return errno > 0 ? -errno : -EIO; }

int rb_create_channel(struct rdma_event_channel **out, int *fd) {
	struct rdma_event_channel *ch = rdma_create_event_channel();
	if (!ch)
		return neg_errno();
	// Non-blocking, so that rdma_get_cm_event never waits: Go polls the fd
	// with a deadline instead.
	int flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		int e = neg_errno();
		rdma_destroy_event_channel(ch);
		return e;
	}
	*out = ch;
	*fd = ch->fd;
	return 0;
}

int rb_create_id(struct rdma_event_channel *ch, int ps, struct rdma_cm_id **out) {
	if (rdma_create_id(ch, out, NULL, (enum rdma_port_space)ps))
		return neg_errno();
	return 0;
}

static socklen_t to_sockaddr(const struct rb_addr *a, struct sockaddr_storage *ss) {
	memset(ss, 0, sizeof *ss);
	if (a->v6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(a->port);
		memcpy(&s->sin6_addr, a->ip, 16);
		return sizeof *s;
	}
	struct sockaddr_in *s = (struct sockaddr_in *)ss;
	s->sin_family = AF_INET;
	s->sin_port = htons(a->port);
	memcpy(&s->sin_addr, a->ip, 4);
	return sizeof *s;
}

static void from_sockaddr(const struct sockaddr *sa, struct rb_addr *a) {
	memset(a, 0, sizeof *a);
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
		a->v6 = 1;
		a->set = 1;
		a->port = ntohs(s->sin6_port);
		memcpy(a->ip, &s->sin6_addr, 16);
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
		a->set = 1;
		a->port = ntohs(s->sin_port);
		memcpy(a->ip, &s->sin_addr, 4);
	}
}

int rb_bind(struct rdma_cm_id *id, const struct rb_addr *a) {
	struct sockaddr_storage ss;
	to_sockaddr(a, &ss);
	if (rdma_bind_addr(id, (struct sockaddr *)&ss))
		return neg_errno();
	return 0;
}

int rb_listen(struct rdma_cm_id *id, int backlog) {
	if (rdma_listen(id, backlog))
		return neg_errno();
	return 0;
}

int rb_resolve_addr(struct rdma_cm_id *id, const struct rb_addr *src, const struct rb_addr *dst, int timeout_ms) {
	struct sockaddr_storage s, d;
	to_sockaddr(dst, &d);
	struct sockaddr *sp = NULL;
	if (src->set) {
		to_sockaddr(src, &s);
		sp = (struct sockaddr *)&s;
	}
	if (rdma_resolve_addr(id, sp, (struct sockaddr *)&d, timeout_ms))
		return neg_errno();
	return 0;
}

int rb_resolve_route(struct rdma_cm_id *id, int timeout_ms) {
	if (rdma_resolve_route(id, timeout_ms))
		return neg_errno();
	return 0;
}

int rb_get_event(struct rdma_event_channel *ch, struct rb_event *out) {
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		return neg_errno();
	memset(out, 0, sizeof *out);
	out->type = ev->event;
	out->status = ev->status;
	out->id = ev->id;
	out->listen_id = ev->listen_id;
	const void *priv;
	uint8_t len;
	if (ev->id && (ev->id->ps == RDMA_PS_UDP || ev->id->ps == RDMA_PS_IPOIB)) {
		const struct rdma_ud_param *ud = &ev->param.ud;
		priv = ud->private_data;
		len = ud->private_data_len;
		out->qp_num = ud->qp_num;
		out->qkey = ud->qkey;
		out->ah_is_global = ud->ah_attr.is_global;
		out->ah_port = ud->ah_attr.port_num;
		out->ah_sl = ud->ah_attr.sl;
		out->ah_dlid = ud->ah_attr.dlid;
		out->ah_hop_limit = ud->ah_attr.grh.hop_limit;
		out->ah_sgid_index = ud->ah_attr.grh.sgid_index;
		memcpy(out->ah_dgid, &ud->ah_attr.grh.dgid, 16);
	} else {
		const struct rdma_conn_param *c = &ev->param.conn;
		priv = c->private_data;
		len = c->private_data_len;
		out->qp_num = c->qp_num;
		out->responder_resources = c->responder_resources;
		out->initiator_depth = c->initiator_depth;
	}
	if (priv && len) { // len <= 255 fits private_data
		memcpy(out->private_data, priv, len);
		out->private_len = len;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

int rb_addrs(struct rdma_cm_id *id, struct rb_addr *local, struct rb_addr *remote) {
	from_sockaddr(rdma_get_local_addr(id), local);
	from_sockaddr(rdma_get_peer_addr(id), remote);
	return 0;
}

void rb_gids(struct rdma_cm_id *id, uint8_t sgid[16], uint8_t dgid[16]) {
	memcpy(sgid, &id->route.addr.addr.ibaddr.sgid, 16);
	memcpy(dgid, &id->route.addr.addr.ibaddr.dgid, 16);
}

const char *rb_device_name(struct rdma_cm_id *id, uint8_t *port) {
	*port = id->port_num;
	if (!id->verbs || !id->verbs->device)
		return NULL;
	return ibv_get_device_name(id->verbs->device);
}

int rb_modify_qp(struct rdma_cm_id *id, struct ibv_qp *qp, int state, int access,
		uint8_t rd_atomic, uint32_t qkey, int *mtu, int *failed_call) {
	struct ibv_qp_attr attr;
	int mask = 0;
	memset(&attr, 0, sizeof attr);
	attr.qp_state = (enum ibv_qp_state)state;
	if (rdma_init_qp_attr(id, &attr, &mask)) {
		*failed_call = 1;
		return neg_errno();
	}
	if (access >= 0 && (mask & IBV_QP_ACCESS_FLAGS))
		attr.qp_access_flags = (unsigned)access;
	if (mask & IBV_QP_PATH_MTU) {
		if (*mtu > 0 && *mtu < (int)attr.path_mtu)
			attr.path_mtu = (enum ibv_mtu)*mtu;
		*mtu = attr.path_mtu;
	}
	if (qkey && (mask & IBV_QP_QKEY))
		attr.qkey = qkey;
	if (rd_atomic && (mask & IBV_QP_MAX_DEST_RD_ATOMIC))
		attr.max_dest_rd_atomic = rd_atomic;
	if (rd_atomic && (mask & IBV_QP_MAX_QP_RD_ATOMIC))
		attr.max_rd_atomic = rd_atomic;
	int rc = ibv_modify_qp(qp, &attr, mask);
	if (rc) {
		*failed_call = 2;
		return rc > 0 ? -rc : rc;
	}
	return 0;
}

static void fill_param(struct rdma_conn_param *p, uint32_t qp_num, const void *priv, uint8_t len,
		uint8_t responder_resources, uint8_t initiator_depth) {
	memset(p, 0, sizeof *p);
	p->private_data = priv;
	p->private_data_len = len;
	p->responder_resources = responder_resources;
	p->initiator_depth = initiator_depth;
	p->retry_count = 7;
	p->rnr_retry_count = 7; // retry for ever, as perftest's QPs do
	p->qp_num = qp_num;
}

int rb_connect(struct rdma_cm_id *id, uint32_t qp_num, const void *priv, uint8_t len,
		uint8_t responder_resources, uint8_t initiator_depth) {
	struct rdma_conn_param p;
	fill_param(&p, qp_num, priv, len, responder_resources, initiator_depth);
	if (rdma_connect(id, &p))
		return neg_errno();
	return 0;
}

int rb_accept(struct rdma_cm_id *id, uint32_t qp_num, const void *priv, uint8_t len,
		uint8_t responder_resources, uint8_t initiator_depth) {
	struct rdma_conn_param p;
	fill_param(&p, qp_num, priv, len, responder_resources, initiator_depth);
	if (rdma_accept(id, &p))
		return neg_errno();
	return 0;
}

int rb_reject(struct rdma_cm_id *id, const void *priv, uint8_t len) {
	if (rdma_reject(id, priv, len))
		return neg_errno();
	return 0;
}

int rb_set_tos(struct rdma_cm_id *id, uint8_t tos) {
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos))
		return neg_errno();
	return 0;
}

int rb_establish(struct rdma_cm_id *id) {
	if (rdma_establish(id))
		return neg_errno();
	return 0;
}

int rb_disconnect(struct rdma_cm_id *id) {
	if (rdma_disconnect(id))
		return neg_errno();
	return 0;
}

int rb_migrate(struct rdma_cm_id *id, struct rdma_event_channel *ch) {
	if (rdma_migrate_id(id, ch))
		return neg_errno();
	return 0;
}

int rb_destroy_id(struct rdma_cm_id *id) {
	if (rdma_destroy_id(id))
		return neg_errno();
	return 0;
}

void rb_destroy_channel(struct rdma_event_channel *ch) { rdma_destroy_event_channel(ch); }
