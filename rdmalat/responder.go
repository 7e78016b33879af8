package rdmalat

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// LocalResponder answers from a goroutine of this process, locked to its
// own OS thread and pinned: the loopback pair's responder, and rdmapeer's
// for each of its sessions (package peer). For READ and atomics it runs
// nothing: the responder's CPU takes no part, as in perftest.
type LocalResponder struct {
	ep        *Endpoint
	initiator PeerInfo
	cpu       int
	timeout   time.Duration
	max       uint64 // round trips one run may answer; 0: no limit
	loop      *cLoop
	done      chan pongResult

	// Turn-taking (park, resume): parking asks the answering goroutine to
	// block once its loop stops, parkedCh says it has, ctl wakes it (true)
	// or ends it (false). isParked and final belong to the initiator's
	// goroutine; final holds a result taken while waiting for a park.
	parking  atomic.Bool
	parkedCh chan struct{}
	ctl      chan bool
	isParked bool
	final    *pongResult
}

// ErrRoundTripLimit ends a responder's loop that answered its max.
var ErrRoundTripLimit = errors.New("rdmalat: the run reached the responder's limit of round trips")

// ResponderConfig says how a LocalResponder answers.
type ResponderConfig struct {
	CPU           int           // CPU to pin the answering thread to; -1: not pinned
	Timeout       time.Duration // the loop's longest wait for the initiator; 0: 5 s
	MaxRoundTrips uint64        // round trips one run may answer; 0: no limit
}

// NewLocalResponder returns the responder of ep, connected to the
// initiator described by initiator.
func NewLocalResponder(ep *Endpoint, initiator PeerInfo, cfg ResponderConfig) *LocalResponder {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	return &LocalResponder{ep: ep, initiator: initiator, cpu: cfg.CPU, timeout: cfg.Timeout, max: cfg.MaxRoundTrips}
}

// Endpoint returns the endpoint the responder answers from.
func (r *LocalResponder) Endpoint() *Endpoint { return r.ep }

// MaxRoundTrips returns the limit of round trips one run may answer.
func (r *LocalResponder) MaxRoundTrips() uint64 { return r.max }

// Abort ends the answering loop at once, wherever it waits; Stop must
// still be called. It does nothing when no loop runs.
func (r *LocalResponder) Abort() {
	if r.loop != nil {
		r.loop.stop()
	}
}

type pongResult struct {
	n   uint64
	err error
}

func (r *LocalResponder) Start(size int, abort func(error)) error {
	if r.ep.cfg.Op.OneSided() {
		return nil // READ and atomics: this side's CPU does nothing
	}
	loop, err := newCLoop(r.ep, r.initiator, size, r.timeout)
	if err != nil {
		return err
	}
	r.loop, r.done = loop, make(chan pongResult, 1)
	r.ctl, r.parkedCh, r.final, r.isParked = make(chan bool), make(chan struct{}, 1), nil, false
	r.parking.Store(false)
	ready := make(chan error, 1)
	go func() {
		unpin, err := pinThread(r.cpu)
		ready <- err
		if err != nil {
			return
		}
		defer unpin()
		var total uint64
		for {
			left := uint64(0)
			if r.max > 0 {
				left = r.max - total
			}
			n, err := loop.pong(left)
			total += n
			if err == nil && r.max > 0 && total == r.max {
				err = fmt.Errorf("%w (%d)", ErrRoundTripLimit, r.max)
			}
			if err != nil {
				abort(fmt.Errorf("rdmalat: responder: %w", err))
			}
			if err != nil || !r.parking.Load() {
				r.done <- pongResult{total, err}
				return
			}
			// Parked between turns: this goroutine blocks on the channel,
			// its thread spins no more, until the next turn or the end.
			r.parkedCh <- struct{}{}
			if !<-r.ctl {
				r.done <- pongResult{total, nil}
				return
			}
		}
	}()
	if err := <-ready; err != nil {
		loop.free()
		r.loop = nil
		return err
	}
	return nil
}

// park stops the answering loop at its next wait for the initiator (an
// answer in flight completes first) and blocks its goroutine until resume
// or Stop: between turns of a duet no thread of the process spins. The
// initiator calls it once its chunk has returned, so every round trip it
// ran has been answered.
func (r *LocalResponder) park() error {
	if r.loop == nil || r.isParked {
		return nil
	}
	r.parking.Store(true)
	r.loop.finish()
	select {
	case <-r.parkedCh:
		r.isParked = true
		return nil
	case res := <-r.done:
		r.final = &res
		if res.err != nil {
			return fmt.Errorf("rdmalat: responder: %w", res.err)
		}
		return errors.New("rdmalat: the responder ended instead of parking")
	case <-time.After(r.timeout + time.Second):
		return fmt.Errorf("rdmalat: responder did not park within %v", r.timeout+time.Second)
	}
}

// resume lets a parked responder answer again.
func (r *LocalResponder) resume() error {
	if r.loop == nil || !r.isParked {
		return nil
	}
	r.loop.resume()
	r.parking.Store(false)
	r.isParked = false
	r.ctl <- true
	return nil
}

// Stop ends the loop once an answer in flight has completed (the
// initiator sees an answer land before this side polls its completion),
// and returns the round trips answered.
func (r *LocalResponder) Stop() (uint64, error) {
	if r.loop == nil {
		return 0, nil
	}
	var res pongResult
	switch {
	case r.final != nil:
		res = *r.final
	case r.isParked:
		r.isParked = false
		r.ctl <- false
		res = <-r.done
	default:
		r.loop.finish()
		select {
		case res = <-r.done:
		case <-time.After(r.timeout + time.Second):
			// The C loop checks its stop flag every 1024 spins; not seeing it
			// return means it is stuck in a way that freeing it would turn
			// into a crash, so it is left allocated.
			return 0, fmt.Errorf("rdmalat: responder did not stop within %v", r.timeout+time.Second)
		}
	}
	r.final = nil
	r.loop.free()
	r.loop = nil
	if res.err != nil {
		return res.n, fmt.Errorf("rdmalat: responder: %w", res.err)
	}
	return res.n, nil
}
