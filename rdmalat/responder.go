package rdmalat

import (
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/responder"
)

// localResponder answers from a goroutine of this process, locked to its
// own OS thread and pinned: the loopback pair's responder, and rdmapeer's
// for each of its sessions (internal/peer). For READ and atomics it runs
// nothing: the responder's CPU takes no part, as in perftest.
type localResponder struct {
	ep        *Endpoint
	initiator PeerInfo
	cpu       env.CPU
	timeout   time.Duration
	max       uint64 // round trips one run may answer; 0: no limit
	loop      *cLoop
	done      chan pongResult
	parkable  bool // the next Start gives the loop an eventfd to park on
}

// newLocalResponder returns the responder of ep, connected to the
// initiator described by initiator.
func newLocalResponder(ep *Endpoint, initiator PeerInfo, cfg responder.Config) *localResponder {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	return &localResponder{ep: ep, initiator: initiator, cpu: cfg.CPU, timeout: cfg.Timeout, max: cfg.MaxRoundTrips}
}

// Endpoint returns the endpoint the responder answers from.
func (r *localResponder) Endpoint() *Endpoint { return r.ep }

// MaxRoundTrips returns the limit of round trips one run may answer.
func (r *localResponder) MaxRoundTrips() uint64 { return r.max }

// Abort ends the answering loop at once, wherever it waits; Stop must
// still be called. It does nothing when no loop runs.
func (r *localResponder) Abort() {
	if r.loop != nil {
		r.loop.stop()
	}
}

type pongResult struct {
	n   uint64
	err error
}

func (r *localResponder) Start(size int, abort func(error)) error {
	if r.ep.cfg.Op.OneSided() {
		return nil // READ and atomics: this side's CPU does nothing
	}
	loop, err := newCLoop(r.ep, r.initiator, size, r.timeout, 0)
	if err != nil {
		return err
	}
	if r.parkable {
		if err := loop.l.EnableParking(); err != nil {
			loop.free()
			return err
		}
	}
	r.loop, r.done = loop, make(chan pongResult, 1)
	ready := make(chan error, 1)
	go func() {
		unpin, err := pinThread(r.cpu)
		ready <- err
		if err != nil {
			return
		}
		defer unpin()
		n, err := loop.pong(r.max)
		if err == nil && r.max > 0 && n == r.max {
			err = fmt.Errorf("%w (%d)", responder.ErrRoundTripLimit, r.max)
		}
		if err != nil {
			abort(fmt.Errorf("rdmalat: responder: %w", err))
		}
		r.done <- pongResult{n, err}
	}()
	if err := <-ready; err != nil {
		loop.free()
		r.loop = nil
		return err
	}
	return nil
}

// Stop ends the loop once an answer in flight has completed (the
// initiator sees an answer land before this side polls its completion),
// and returns the round trips answered.
func (r *localResponder) Stop() (uint64, error) {
	if r.loop == nil {
		return 0, nil
	}
	r.loop.finish()
	var res pongResult
	select {
	case res = <-r.done:
	case <-time.After(r.timeout + time.Second):
		// The C loop checks its stop flag every 1024 spins; not seeing it
		// return means it is stuck in a way that freeing it would turn
		// into a crash, so it is left allocated.
		return 0, fmt.Errorf("rdmalat: responder did not stop within %v", r.timeout+time.Second)
	}
	r.loop.free()
	r.loop = nil
	if res.err != nil {
		return res.n, fmt.Errorf("rdmalat: responder: %w", res.err)
	}
	return res.n, nil
}

// allowParking makes the next Start's loop able to park (turn-taking).
func (r *localResponder) allowParking() { r.parkable = true }

// park puts the answering thread to sleep at its next wait for the
// initiator, in read(2) on an eventfd (internal/loops): between turns of a
// duet no thread spins, and the thread never leaves its C loop, so waking
// it involves no Go scheduling. Call it once the initiator's chunk has
// returned, when every round trip it ran has been answered; it returns
// once the thread sleeps. READ and atomics have no loop to park.
func (r *localResponder) park() error {
	if r.loop == nil {
		return nil
	}
	r.loop.l.Park()
	deadline := time.Now().Add(r.timeout)
	for !r.loop.l.Parked() {
		select {
		case res := <-r.done:
			r.done <- res // for Stop
			if res.err != nil {
				return fmt.Errorf("rdmalat: responder: %w", res.err)
			}
			return errors.New("rdmalat: the responder ended instead of parking")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("rdmalat: the responder did not park within %v", r.timeout)
		}
		time.Sleep(20 * time.Microsecond)
	}
	return nil
}

// resume wakes a parked responder.
func (r *localResponder) resume() error {
	if r.loop != nil {
		r.loop.l.Unpark()
	}
	return nil
}
