// C side of package rdmacm: a few wrappers that bundle librdmacm calls
// with the struct handling that is awkward from cgo. Every function returns
// 0 or a negative errno; none blocks (the event channel is non-blocking).

#ifndef RDMABENCH_CM_H
#define RDMABENCH_CM_H

#include <stdint.h>
#include <rdma/rdma_cma.h>

// rb_addr is an IP address and port in the form Go passes it: 16 bytes
// (IPv4 as the first 4 when v6 is 0) and the port in host byte order.
struct rb_addr {
	uint8_t ip[16];
	uint16_t port;
	uint8_t v6;
	uint8_t set; // 0: no address (wildcard or unknown)
};

// rb_event is what package rdmacm keeps of a struct rdma_cm_event, copied
// out before the event is acknowledged.
struct rb_event {
	int32_t type;
	int32_t status;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	uint32_t qp_num;      // conn or ud param: the peer's QP number
	uint32_t qkey;        // ud param
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t private_len;
	uint8_t ah_is_global; // ud param: the address vector to the peer
	uint8_t ah_port;
	uint8_t ah_sl;
	uint8_t ah_hop_limit;
	uint8_t ah_sgid_index;
	uint16_t ah_dlid;
	uint8_t ah_dgid[16];
	uint8_t private_data[256];
};

int rb_create_channel(struct rdma_event_channel **out, int *fd);
int rb_create_id(struct rdma_event_channel *ch, int ps, struct rdma_cm_id **out);
int rb_bind(struct rdma_cm_id *id, const struct rb_addr *a);
int rb_listen(struct rdma_cm_id *id, int backlog);
int rb_resolve_addr(struct rdma_cm_id *id, const struct rb_addr *src, const struct rb_addr *dst, int timeout_ms);
int rb_resolve_route(struct rdma_cm_id *id, int timeout_ms);
int rb_get_event(struct rdma_event_channel *ch, struct rb_event *out);
int rb_addrs(struct rdma_cm_id *id, struct rb_addr *local, struct rb_addr *remote);
void rb_gids(struct rdma_cm_id *id, uint8_t sgid[16], uint8_t dgid[16]);
const char *rb_device_name(struct rdma_cm_id *id, uint8_t *port);
int rb_modify_qp(struct rdma_cm_id *id, struct ibv_qp *qp, int state, int access,
		uint8_t rd_atomic, uint32_t qkey, int *mtu, int *failed_call);
int rb_connect(struct rdma_cm_id *id, uint32_t qp_num, const void *priv, uint8_t len,
		uint8_t responder_resources, uint8_t initiator_depth);
int rb_accept(struct rdma_cm_id *id, uint32_t qp_num, const void *priv, uint8_t len,
		uint8_t responder_resources, uint8_t initiator_depth);
int rb_reject(struct rdma_cm_id *id, const void *priv, uint8_t len);
int rb_set_tos(struct rdma_cm_id *id, uint8_t tos);
int rb_establish(struct rdma_cm_id *id);
int rb_disconnect(struct rdma_cm_id *id);
int rb_migrate(struct rdma_cm_id *id, struct rdma_event_channel *ch);
int rb_destroy_id(struct rdma_cm_id *id);
void rb_destroy_channel(struct rdma_event_channel *ch);

#endif
