package peer

import (
	"fmt"
	"slices"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// A load session (oob.FlagLoad) is the target of the client's bandwidth
// stream: a queue pair and a buffer its RDMA WRITEs land in, with no
// answering loop and no CPU. The client measures latency on another
// session meanwhile. It holds a session slot and its registered memory
// like any session, and the wait for the client's next request (a Run
// that renews it, Done, new Params or the close) is bounded by the idle
// limit, so a client cannot keep it past -idle without renewing it.

// openLoad sets up a load session's target on rail, its memory already
// reserved, and connects it to the client's queue pair. Its ACK timeout
// does not matter: the stream's retries are timed by the client's queue
// pair, which sends; this one only acknowledges.
func (s *servedSession) openLoad(p oob.Params, rail Rail) error {
	ep, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{
		Device: rail.Device, Port: s.cfg.Port, GIDIndex: env.GIDSetting(s.cfg.GIDIndex),
		Op: spec.Write, Transport: spec.RC, MaxSize: int(p.Size), MTU: int(p.MTU), QoS: p.QoS,
		HugePages: p.Flags&oob.FlagHugePages != 0, THP: p.Flags&oob.FlagTHP != 0, ODP: p.Flags&oob.FlagODP != 0,
		MemNode: rail.MemNode,
	})
	if err != nil {
		return s.fail(oob.CodeResource, err)
	}
	s.ep = ep
	s.rep.Device = ep.Device().Name
	wire := s.wire(ep)
	if s.cfg.LoadOnly {
		wire.CPU = -1 // nothing of this side runs for the stream
	}
	if err := s.conn.SendEndpoint(wire); err != nil {
		return err
	}
	ce, err := s.conn.RecvEndpoint()
	if err != nil {
		return err
	}
	if err := ep.Connect(peerInfoOf(ce)); err != nil {
		return s.fail(oob.CodeResource, err)
	}
	s.seq = 0
	return s.conn.Send(oob.Barrier{Seq: 0})
}

// renewLoad answers a load session's Run: the stream goes on for another
// measured run, and the idle bound starts again.
func (s *servedSession) renewLoad(m oob.Run) error {
	switch {
	case m.Seq != s.seq+1:
		return s.fail(oob.CodeProtocol, fmt.Errorf("%w: Run %d out of step: expected %d", oob.ErrProtocol, m.Seq, s.seq+1))
	case m.Size < 1 || m.Size > s.rep.Params.Size:
		return s.fail(oob.CodeParams, fmt.Errorf("%w: run size %d: must be 1..%d (the session's size)", oob.ErrInvalidParams, m.Size, s.rep.Params.Size))
	}
	s.seq = m.Seq
	s.rep.Runs++
	if !slices.Contains(s.rep.Sizes, int(m.Size)) {
		s.rep.Sizes = append(s.rep.Sizes, int(m.Size))
	}
	return s.conn.Send(oob.Barrier{Seq: m.Seq})
}

// loadDone takes the client's Done in a load session: its stream has
// stopped after m.RoundTrips bytes written. Anywhere else a Done out of a
// run is out of sequence.
func (s *servedSession) loadDone(m oob.Done) error {
	if !s.load || !s.active {
		return s.fail(oob.CodeProtocol, fmt.Errorf("%w: expected Params or Run from %s, got Done", oob.ErrProtocol, s.client))
	}
	s.rep.Bytes += m.RoundTrips
	return s.conn.SendDone(0)
}
