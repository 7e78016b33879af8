package rdmalat

import (
	"errors"
	"fmt"
	"time"
)

// LoopbackConfig describes a loopback pair: both endpoints in this process.
type LoopbackConfig struct {
	Endpoint   EndpointConfig // the initiator's; the responder copies it
	PeerDevice string         // the responder's device; empty: the same
	CPUs       [2]int         // initiator, responder
	NoPin      bool
	Timeout    time.Duration
}

// Pair is a connected initiator and its responder, in one process
// (loopback) or across the network (two-node). Its Runs measure latency
// from Local to the responder and back.
type Pair struct {
	Local     *Endpoint
	Remote    PeerInfo
	Responder Responder
	// Mode is "loopback" or "two-node"; PeerDevice describes the
	// responder's device.
	Mode       string
	PeerDevice DeviceInfo
	CPUs       [2]int // initiator, responder; -1: not pinned
	Timeout    time.Duration
	closers    []func() error
}

// NewLoopback builds and connects two endpoints in this process, on one
// device or two, with the responder answering from a goroutine locked to
// its own OS thread and pinned to CPUs[1].
func NewLoopback(cfg LoopbackConfig) (_ *Pair, err error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	p := &Pair{Mode: "loopback", CPUs: cfg.CPUs, Timeout: cfg.Timeout}
	if cfg.NoPin {
		p.CPUs = [2]int{-1, -1}
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.Local, err = NewEndpoint(cfg.Endpoint); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, p.Local.Close)
	rcfg := cfg.Endpoint
	if cfg.PeerDevice != "" {
		rcfg.Device = cfg.PeerDevice
		rcfg.Port = 0 // the first active port of the other device
	}
	remote, err := NewEndpoint(rcfg)
	if err != nil {
		return nil, fmt.Errorf("rdmalat: responder endpoint: %w", err)
	}
	p.closers = append(p.closers, remote.Close)
	if err = p.Local.Connect(remote.Info()); err != nil {
		return nil, err
	}
	if err = remote.Connect(p.Local.Info()); err != nil {
		return nil, err
	}
	p.Remote = remote.Info()
	p.PeerDevice = remote.Device()
	p.Responder = &localResponder{ep: remote, initiator: p.Local.Info(), cpu: p.CPUs[1], timeout: cfg.Timeout}
	return p, nil
}

// Start begins a Run of the given size with the pair's pinning and timeout.
func (p *Pair) Start(size, warmup int) (*Run, error) {
	return StartRun(p.Local, p.Remote, p.Responder, RunConfig{Size: size, Warmup: warmup, Timeout: p.Timeout, CPU: p.CPUs[0]})
}

// Close releases both endpoints (or ends the session with the peer).
func (p *Pair) Close() error {
	if p == nil {
		return nil
	}
	var errs []error
	for i := len(p.closers) - 1; i >= 0; i-- {
		errs = append(errs, p.closers[i]())
	}
	p.closers = nil
	return errors.Join(errs...)
}

// localResponder answers from a goroutine of this process: the loopback
// pair's responder, and rdmapeer's (see Serve).
type localResponder struct {
	ep        *Endpoint
	initiator PeerInfo
	cpu       int
	timeout   time.Duration
	max       uint64 // round trips one run may answer; 0: no limit
	loop      *cLoop
	done      chan pongResult
}

// errRoundTripLimit ends a responder's loop that answered its max.
var errRoundTripLimit = errors.New("rdmalat: the run reached the responder's limit of round trips")

type pongResult struct {
	n   uint64
	err error
}

func (r *localResponder) Start(size int, abort func(error)) error {
	if r.ep.cfg.Op.OneSided() {
		return nil // READ and atomics: this side's CPU does nothing
	}
	loop, err := newCLoop(r.ep, r.initiator, size, r.timeout)
	if err != nil {
		return err
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
			err = fmt.Errorf("%w (%d)", errRoundTripLimit, r.max)
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
