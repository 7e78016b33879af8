// Package rdmalat measures RDMA latency the way perftest's ib_write_lat,
// ib_read_lat, ib_send_lat and ib_atomic_lat do, inside a Go program.
//
// An Endpoint is one side: a device context, protection domain, queue
// pair, completion queues and a registered buffer (EndpointConfig says
// which operation, transport and sizes). A Pair joins two endpoints,
// either in this process (NewLoopback: the initiator and a localResponder
// on two pinned threads) or across nodes (DialPeer: this process's
// initiator against an rdmapeer on another host). Pair.Start begins a Run,
// whose Next returns one round trip's latency, measured by a C loop
// (internal/loops) that mirrors perftest's for the operation; Measure is
// the body of a testing.B benchmark built on a Pair, recording every
// sample into a latency.Recorder and reporting perftest's statistics as
// benchmark metrics.
//
// The engines mirror perftest's semantics where users compare against it:
// the same turn-taking, signalling, inline defaults (InlinePerftest), and
// halving of round trips for write and send but not for read and atomics.
// Where they differ (a monotonic clock instead of cycle counters, a
// warm-up, deadlines on every wait) the field comments say so.
package rdmalat
