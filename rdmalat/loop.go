package rdmalat

import (
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// cLoop is one side's measured loop (internal/loops) on an endpoint, for
// one size. Its methods are nil-safe where a one-sided operation's
// responder has no loop.
type cLoop struct {
	l  *loops.Loop
	ep *Endpoint
}

func newCLoop(ep *Endpoint, remote PeerInfo, size int, timeout, gap time.Duration) (*cLoop, error) {
	if ep.remote == nil {
		return nil, fmt.Errorf("rdmalat: endpoint not connected")
	}
	if size < 1 || size > ep.cfg.MaxSize || size > remote.Size {
		return nil, fmt.Errorf("rdmalat: size %d outside 1..%d", size, min(ep.cfg.MaxSize, remote.Size))
	}
	if err := spec.CheckSize(ep.cfg.Op, ep.cfg.Transport, size, ep.mtu.Bytes()); err != nil {
		return nil, fmt.Errorf("rdmalat: %v over %v: %w", ep.cfg.Op, ep.cfg.Transport, err)
	}
	cfg := ep.loopConfig(remote, size, timeout)
	cfg.Gap = gap
	l, err := loops.New(cfg)
	if l != nil {
		ep.posted = l.Posted()
	}
	if err != nil {
		l.Free()
		return nil, fmt.Errorf("rdmalat: %w", err)
	}
	return &cLoop{l: l, ep: ep}, nil
}

// loopConfig describes the endpoint's side of a loop of size bytes.
func (e *Endpoint) loopConfig(remote PeerInfo, size int, timeout time.Duration) loops.Config {
	c := loops.Config{
		Op: e.cfg.Op, Transport: e.cfg.Transport, Events: e.cfg.Events,
		QP: e.qp, SendCQ: e.sendCQ, SendChannel: e.sendCh,
		MR: e.mr, Send: e.lay.send, Recv: e.lay.recv, RecvLen: e.lay.recvLen,
		Size: size, Inline: size <= e.InlineMax(),
		RemoteAddr: remote.Addr, RKey: remote.RKey,
		Timeout: timeout,
	}
	if e.cfg.Op.Receives() {
		c.RecvCQ, c.RecvChannel = e.recvCQ, e.recvCh
		c.RxDepth, c.Posted, c.RepostBelow = e.rxDepth, e.posted, e.repostBelow
	}
	if e.cfg.Transport == spec.UD {
		c.AH, c.RemoteQPN = e.ah, remote.QPN
	}
	return c
}

// stop ends the loop at once, wherever it waits.
func (c *cLoop) stop() {
	if c != nil {
		c.l.Stop()
	}
}

// finish ends the loop at its next wait for the peer: an answer already
// posted completes and is counted first.
func (c *cLoop) finish() {
	if c != nil {
		c.l.Finish()
	}
}

// free releases the loop, keeping the count of receives it left posted
// on the endpoint's queue pair for the next loop.
func (c *cLoop) free() {
	if c != nil && c.l != nil {
		c.ep.posted = c.l.Posted()
		c.l.Free()
		c.l = nil
	}
}

// ping runs len(rtt) samples as the initiator.
func (c *cLoop) ping(rtt []int64) error { return c.l.Ping(rtt) }

// pong answers until stopped or max round trips (0: until stopped). A stop
// is the normal end and returns nil.
func (c *cLoop) pong(max uint64) (uint64, error) { return c.l.Pong(max) }

// clockCost returns the cost in nanoseconds of one clock read in the
// measured loop (clock_gettime(CLOCK_MONOTONIC)), the only measurement
// work done there per sample, averaged over n reads.
func clockCost(n int) float64 { return loops.ClockCost(n) }
