// Package responder is rdmapeer's way into the server side of rdmalat:
// the answering loop on a local endpoint and the rdma_cm accept, which no
// benchmark of a user's needs and rdmalat's public API therefore leaves
// out. rdmalat registers its implementation when it is initialised
// (Register); internal/peer, which imports rdmalat, finds it with For.
// The types are parameters because this package sits below rdmalat and
// cannot name rdmalat's Endpoint and PeerInfo.
package responder

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/rdmabench/rdmabench/env"
)

// Config says how a Loop answers.
type Config struct {
	CPU           env.CPU       // the answering thread's; the zero CPU leaves it unpinned
	Timeout       time.Duration // the loop's longest wait for the initiator; 0: 5 s
	MaxRoundTrips uint64        // round trips one run may answer; 0: no limit
}

// ErrRoundTripLimit ends a loop that answered its Config.MaxRoundTrips.
var ErrRoundTripLimit = errors.New("rdmalat: the run reached the responder's limit of round trips")

// Loop answers the initiator's round trips from a goroutine of this
// process, locked to its own OS thread and pinned: the loopback pair's
// responder, and rdmapeer's for each of its sessions. For READ and
// atomics it runs nothing: the responder's CPU takes no part, as in
// perftest.
type Loop interface {
	// Start makes the loop ready to answer runs of size bytes; abort is
	// called, from the loop's goroutine, should it fail.
	Start(size int, abort func(error)) error
	// Stop ends the loop once an answer in flight has completed and
	// returns the round trips answered.
	Stop() (answered uint64, err error)
	// Abort ends the loop at once, wherever it waits; Stop must still be
	// called. It does nothing when no loop runs.
	Abort()
	// MaxRoundTrips returns Config.MaxRoundTrips.
	MaxRoundTrips() uint64
}

// Listener is an rdma_cm listener on an endpoint's device address, for
// one connection.
type Listener interface {
	// Addr returns the address and port the listener is bound to.
	Addr() netip.AddrPort
	// Close stops listening; an accepted connection lives on. Nil-safe.
	Close() error
}

// Hooks are rdmalat's server side, for its endpoint type E and its peer
// description P.
type Hooks[E, P any] struct {
	// New returns the Loop of ep, connected to the initiator described
	// by initiator.
	New func(ep E, initiator P, cfg Config) Loop
	// ListenCM listens for the peer's rdma_cm connection on the IP
	// address of ep's port and GID, on a port the kernel chooses.
	ListenCM func(ep E) (Listener, error)
	// AcceptCM waits until ctx ends for the peer's connection on l whose
	// private data carries cookie, connects ep's queue pair with it and
	// returns what the peer told of itself.
	AcceptCM func(ctx context.Context, ep E, l Listener, cookie uint64) (P, error)
}

var registered any // a Hooks, set once by rdmalat's init

// Register records rdmalat's hooks. rdmalat calls it from init.
func Register[E, P any](h Hooks[E, P]) { registered = h }

// For returns the hooks registered for E and P. It panics when there are
// none: the caller did not import rdmalat, or named other types.
func For[E, P any]() Hooks[E, P] {
	h, ok := registered.(Hooks[E, P])
	if !ok {
		panic("responder: no hooks registered for these types (rdmalat registers them for *rdmalat.Endpoint and rdmalat.PeerInfo)")
	}
	return h
}
