package rdmalat

import "github.com/rdmabench/rdmabench/verbs"

// The queue settings and routing of an endpoint are perftest's defaults in
// its latency tests (perftest 4.5, the reference users compare against),
// so that a comparison with ib_*_lat differs in the measuring loop only:
//
//   - one send work request and a send CQ of one entry (perftest forces
//     tx_depth 1 in latency tests; every operation is signaled and its
//     completion polled before the next post, so one is all that is used);
//   - a receive CQ of rxDepth entries, rxDepth receives pre-posted;
//   - as many outstanding RDMA READs and atomics as the device allows
//     (perftest's out_reads: max_qp_rd_atom), though the loops keep one in
//     flight;
//   - a GRH on RoCE always, on InfiniBand only when a GID index is given.

const (
	sendQueueDepth = 1 // perftest's tx_depth in latency tests
	sendCQDepth    = 1
)

// outstandingReads returns max_rd_atomic and max_dest_rd_atomic as perftest
// sets them: the device's max_qp_rd_atom, at least 1 and at most 255 (the
// attributes are 8-bit). What this side may initiate is also capped by the
// device's max_qp_init_rd_atom.
func outstandingReads(a verbs.DeviceAttr) (initiate, accept uint8) {
	clamp := func(n int) uint8 { return uint8(min(max(n, 1), 255)) }
	accept = clamp(a.MaxQPRdAtom)
	initiate = min(accept, clamp(a.MaxQPInitRdAtom))
	return initiate, accept
}

// useGRH decides whether packets to the peer carry a Global Route Header,
// as perftest does: RoCE addresses by GID, so always; InfiniBand routes by
// LID and adds a GRH only when a GID index was asked for (perftest -x,
// RDMABENCH_GID_INDEX). A port with LID 0 has no LID to route by (EFA,
// whose link layer is unspecified; an InfiniBand port without a subnet
// manager): its address handles need the GRH, or EFA refuses them. An
// unspecified link layer with a LID is InfiniBand (drivers that predate
// the field).
func useGRH(ll verbs.LinkLayer, gidIndexGiven bool, lid uint16) bool {
	return ll == verbs.LinkLayerEthernet || gidIndexGiven || lid == 0
}
