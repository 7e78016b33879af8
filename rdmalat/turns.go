package rdmalat

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/internal/turn"
)

// Turn-taking: when a conductor (rdmaab's duet) has passed its socket in
// RDMABENCH_TURN_FD, every Run of the process takes turns with the other
// side's process. A Run blocks on that socket until it is given the turn,
// runs one burst of the round trips the conductor asks for as one chunk
// (with its lead round trip, as every chunk), parks its responder so that
// no thread spins, and hands the turn back with the burst's median and
// min. Warm-up and the recorded samples are what they are alone; only the
// chunks' lengths and the pauses between them differ.

// turnTimeout bounds a wait for the turn: the other process may be in its
// setup, warm-up or reporting meanwhile, which take seconds under
// emulation, and the conductor starts a pair while the one before runs.
const turnTimeout = 5 * time.Minute

// warmUpInTurn runs the warm-up in one turn: from the responder's start
// to its park nothing of this Run spins outside a turn.
func (r *Run) warmUpInTurn(warmup int) error {
	var err error
	for left := warmup; left > 0 && err == nil; {
		n := min(left, maxChunk)
		if err = r.ping(r.buf[:n]); err == nil {
			r.total += uint64(n)
			left -= n
		}
	}
	if err != nil {
		r.err = err
	} else {
		err = r.parker.park()
	}
	if rerr := r.turns.Release(turn.Burst{Kind: turn.KindWarmup, Label: r.label, Run: r.runNo, N: warmup}); err == nil {
		err = rerr
	}
	return err
}

// burst waits for the turn, runs one chunk of the conductor's length and
// hands the turn back. The turn is handed back whatever happened, so that
// a failed run does not hold the other side.
func (r *Run) burst() error {
	k, err := r.turns.Acquire()
	if err != nil {
		return err
	}
	r.chunk = min(k, maxChunk)
	rtt := r.buf[:r.chunk+1]
	if err = r.parker.resume(); err == nil {
		err = r.ping(rtt)
	}
	if err == nil {
		err = r.parker.park()
	}
	r.seq++
	b := turn.Burst{Kind: turn.KindBurst, Label: r.label, Run: r.runNo, Seq: r.seq}
	if err == nil {
		s := r.sorted[:r.chunk]
		copy(s, rtt[1:])
		slices.Sort(s)
		b.N, b.Median, b.Min = len(s), s[len(s)/2], s[0]
	}
	return errors.Join(err, r.turns.Release(b))
}

// setLabel names the Run's bursts for the conductor (Measure gives the
// benchmark's name); it counts the runs of each label, which the
// conductor pairs in order. It does nothing without a conductor.
func (r *Run) setLabel(label string) {
	if r.turns != nil && label != "" {
		r.label, r.runNo = label, nextRunNo(label)
	}
}

var runNos struct {
	sync.Mutex
	m map[string]int
}

func nextRunNo(label string) int {
	runNos.Lock()
	defer runNos.Unlock()
	if runNos.m == nil {
		runNos.m = map[string]int{}
	}
	runNos.m[label]++
	return runNos.m[label]
}
