package rdmalat

import (
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/responder"
)

// LoopbackConfig describes a loopback pair: both endpoints in this process.
type LoopbackConfig struct {
	Endpoint   EndpointConfig // the initiator's; the responder copies it
	PeerDevice string         // the responder's device; empty: the same
	// CPUs pin the initiator and the responder; the zero CPU leaves a
	// thread unpinned. DefaultCPUs is the benchmarks' choice.
	CPUs    [2]env.CPU
	Timeout time.Duration
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
	CPUs       [2]env.CPU // the initiator's and the loopback responder's
	// PeerCPU, two-node only, is the CPU rdmapeer's answering thread is
	// pinned to.
	PeerCPU env.CPU
	// PeerSessions, two-node only, is how many other sessions rdmapeer
	// served when this one opened (each on its own CPU when rdmapeer
	// pins them, side by side when it does not).
	PeerSessions int
	Timeout      time.Duration
	// Counters makes Measure report the initiator's port counters that
	// rose during each measured run, per operation (counters.go).
	Counters bool
	// Limits are absolute limits Measure fails a run above
	// (RDMABENCH_MAX), after reporting its metrics.
	Limits []Limit
	// Gap is the idle time before each round trip of the initiator
	// (RDMABENCH_GAP, like perftest --latency_gap), left out of the
	// samples: latency after an idle rather than back to back.
	Gap     time.Duration
	load    *loadStream // StartLoad (load.go); nil: none
	peer    *peerDial   // two-node: how DialPeer reached rdmapeer, for StartLoad
	closers []func() error
}

// NewLoopback builds and connects two endpoints in this process, on one
// device or two, with the responder answering from a goroutine locked to
// its own OS thread and pinned to CPUs[1].
func NewLoopback(cfg LoopbackConfig) (_ *Pair, err error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	p := &Pair{Mode: "loopback", Timeout: cfg.Timeout, CPUs: cfg.CPUs}
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
	if cfg.Endpoint.CM {
		if err = connectCMLoopback(p.Local, remote, cfg.Timeout); err != nil {
			return nil, err
		}
	} else {
		if err = p.Local.Connect(remote.Info()); err != nil {
			return nil, err
		}
		if err = remote.Connect(p.Local.Info()); err != nil {
			return nil, err
		}
	}
	p.Remote = remote.Info()
	p.PeerDevice = remote.Device()
	p.Responder = newLocalResponder(remote, p.Local.Info(), responder.Config{CPU: p.CPUs[1], Timeout: cfg.Timeout})
	return p, nil
}

// Start begins a Run of the given size with the pair's pinning and timeout.
func (p *Pair) Start(size, warmup int) (*Run, error) {
	return startRun(p.Local, p.Remote, p.Responder, runConfig{Size: size, Warmup: warmup, Timeout: p.Timeout, CPU: p.CPUs[0], Gap: p.Gap})
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
