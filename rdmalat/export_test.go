package rdmalat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/internal/work"
	"github.com/rdmabench/rdmabench/verbs"
)

// Hooks for the black-box tests of every operation (ops_test.go), which
// need to look at both sides' buffers of a loopback pair.

func responderEndpoint(p *Pair) *Endpoint { return p.Responder.(*localResponder).ep }

// PeerReceiveHalf returns the loopback responder's receive half: what the
// initiator's READ reads and its atomics change (the first 8 bytes).
func PeerReceiveHalf(p *Pair) []byte {
	e := responderEndpoint(p)
	return e.mr.Bytes()[e.lay.recv : e.lay.recv+e.cfg.MaxSize]
}

// LocalSendHalf returns the initiator's send half: where READ data and
// atomics' old values land.
func LocalSendHalf(p *Pair) []byte {
	e := p.Local
	return e.mr.Bytes()[e.lay.send : e.lay.send+e.cfg.MaxSize]
}

// SkewCounter makes the run's next counter d higher than the responder
// expects; ExpectSource makes the initiator expect UD answers from qpn.
func SkewCounter(r *Run, d uint64)    { r.loop.l.SkewCounter(d) }
func ExpectSource(r *Run, qpn uint32) { r.loop.l.ExpectSource(qpn) }
func ResponderQPN(p *Pair) uint32     { return responderEndpoint(p).qp.Num() }
func InitiatorBuffer(p *Pair) []byte  { return p.Local.mr.Bytes() }
func ResponderBuffer(p *Pair) []byte  { return responderEndpoint(p).mr.Bytes() }
func ReceiveOffset(e *Endpoint) int   { return e.lay.recv }
func ReceivesPosted(e *Endpoint) int  { return e.posted }

// CompareSwap posts one COMPARE_AND_SWAP from the initiator to the
// responder's word, outside any loop, and returns the old value.
func CompareSwap(p *Pair, compare, swap uint64) (uint64, error) {
	e := p.Local
	wr := verbs.SendWR{Op: verbs.OpAtomicCmpSwap, Local: e.mr.SGE(e.lay.send, 8),
		RemoteAddr: p.Remote.Addr, RKey: p.Remote.RKey, CompareAdd: compare, Swap: swap, Flags: verbs.FlagSignaled}
	if err := e.qp.PostSend(&wr); err != nil {
		return 0, err
	}
	wc := make([]verbs.WorkCompletion, 1)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		n, err := e.sendCQ.Poll(wc)
		if err != nil {
			return 0, err
		}
		if n == 1 {
			if wc[0].Status != verbs.WCSuccess {
				return 0, fmt.Errorf("compare and swap: %v", wc[0].Status)
			}
			return binary.LittleEndian.Uint64(e.mr.Bytes()[e.lay.send:]), nil // rxe returns host order
		}
	}
	return 0, errors.New("compare and swap: no completion within 5s")
}

// WireOf is wireOf, for the rdma_cm tests that play the peer's side.
var WireOf = wireOf

// DialCM is Endpoint.dialCM, for the tests that play the peer's side.
var DialCM = (*Endpoint).dialCM

// SetExtraWork makes each round trip of r's initiator execute about 2n
// more instructions (loops.Loop.SetExtraWork).
func SetExtraWork(r *Run, n uint32) { r.loop.l.SetExtraWork(n) }

// StartWork resets the instruction counter for r, as Measure does after
// the warm-up; the function it returns reads the work per round trip after
// r closed, and the function after that its profile.
func StartWork(r *Run) func() (map[string]float64, func() (work.Profile, error), error) {
	m := startWork(r)
	return func() (map[string]float64, func() (work.Profile, error), error) {
		ms, err := m.finish(r)
		out := map[string]float64{}
		for _, x := range ms {
			out[x.Unit] = x.Value
		}
		return out, m.profile, err
	}
}

// Buffer returns the endpoint's registered buffer, for tests that check
// how it is backed.
func (e *Endpoint) Buffer() []byte { return e.mr.Bytes() }

// BufferOf returns an endpoint's registered buffer, for a look at where
// its pages are (TestNUMAPlacement).
func BufferOf(e *Endpoint) []byte { return e.mr.Bytes() }
