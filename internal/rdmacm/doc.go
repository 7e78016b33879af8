// Package rdmacm connects queue pairs through the RDMA connection manager
// (librdmacm of rdma-core), the way perftest's -R option does, as an
// alternative to exchanging QP numbers, PSNs and GIDs over a socket.
//
// A server Listens on an IP address of an RDMA device (rdma_bind_addr,
// rdma_listen) and Accepts a connection request; a client Dials it
// (rdma_resolve_addr, rdma_resolve_route, rdma_connect). The private data
// of the request and of the reply carry a PeerInfo each way: the buffer
// address, size and rkey a latency loop needs, and for UD the QP number and
// Q_Key. RC and UD are supported; UC is not (librdmacm has no UC port space
// and perftest -R refuses it).
//
// # The QP is created by package verbs, not by rdma_create_qp
//
// The caller creates PD, CQ, MR and QP with package verbs on its own
// verbs.Context, as for a connection set up by hand, and hands the QP (in
// RESET or INIT) to Dial or Accept. This package uses the rdma_cm_id only
// for the handshake: rdma_connect and rdma_accept carry the QP's number
// (conn_param.qp_num), every state change is ibv_modify_qp with the
// attributes rdma_init_qp_attr returns (the ones rdma_create_qp's QP would
// get: port, P_Key index, path MTU, address vector, PSNs, timeouts, retry
// counts, read depths), and the active side completes with rdma_establish,
// librdmacm's path for a QP it did not create. Once Dial or Accept returns
// the QP is in RTS and verbs knows it (QP.QueryState).
//
// The alternative, rdma_create_qp on the cm_id, would put the QP and with
// it the PD, CQs and MRs on librdmacm's own ibv_context (id->verbs): verbs
// would need a borrowed-context mode and a QP destroyed by rdma_destroy_qp,
// and every engine a second way to build its objects. With the QP made by
// verbs the objects are the same whichever way the QPs are connected, the
// latency loops cannot tell the difference, and a Conn owns no verbs object
// except a UD address handle. The price is one check: the address must be
// on the QP's device (an error wrapping syscall.EXDEV says which).
//
// # Deadlines and errors
//
// Every wait is a poll on the event channel's file descriptor (which is
// non-blocking), bounded by the context's deadline or DefaultTimeout, in
// slices of at most 100 ms so that cancellation and Listener.Close are
// noticed. Errors are *Error values carrying the librdmacm call or CM event
// and a cause that errors.Is matches: os.ErrDeadlineExceeded (and
// context.DeadlineExceeded) when time ran out, syscall.ECONNREFUSED when
// the peer rejected (or nobody listens on that port), syscall.ETIMEDOUT or
// syscall.EHOSTUNREACH when the peer's CM does not answer, os.ErrNotExist
// for an address on no RDMA device, errors.ErrUnsupported for UC or a build
// without cgo.
//
// # Lifetimes
//
// Listener and Conn each own an rdma_cm_id and an event channel of their
// own (an accepted id is moved off the listener's with rdma_migrate_id), so
// a Listener may be closed while its connections live on. Close them before
// the QP's PD: Conn.Close closes a UD connection's address handle. Close
// does not touch the QP. OpenObjects counts ids and channels for leak
// checks.
//
// The package needs cgo and librdmacm (Debian: librdmacm-dev); without
// them it builds, and every constructor fails with an error matching
// errors.ErrUnsupported.
package rdmacm
