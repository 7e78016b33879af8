package rdmalat

import (
	"runtime/debug"
	"time"
)

// How a Run sizes its C calls. Each return from C to Go is a seam: it
// wakes the runtime's sysmon, which then polls for a while on a CPU that
// does not measure, and in the soft-RoCE VM that took host time from the
// polling vCPUs (a 5000-sample 2 B write run in chunks had about 19 more
// stalls and a p99 1.33x perftest's, against 1.01x in one call;
// docs/compare.md). So a run told its length runs in as few calls as it
// can: one for a fixed count (Expect), one per b.Loop checkpoint for a
// duration (ExpectFor); otherwise chunks grow from 16 to 4096.

// Expect says that exactly n more samples will be asked for, as by a
// benchmark run with -benchtime=Nx. They then run in one C call (up to
// 2^20 at a time), like perftest's one loop. Call it before the first
// Next; it allocates the samples' buffer, 8 bytes a sample. Under a
// conductor, whose bursts set the chunks, it does nothing.
func (r *Run) Expect(n int) {
	if r.turns != nil || n <= 0 || r.n != 0 {
		return
	}
	r.expect = n
	r.reserve(min(n, expectMax))
}

// ExpectFor says that samples will be asked for as by testing's b.Loop
// under -benchtime=d: b.Loop checks the time only when the count reaches
// a target (1, then each next one predicted from the time so far, at most
// 100 times the last) and stops at the first target reached after d. The
// run mirrors that (loopTarget) and makes each C call end where b.Loop
// will check, or just past: four or five calls for a run of a second,
// where chunks of up to 4096 made about twenty in the soft-RoCE VM, with
// about 1/200 of the round trips run past b.Loop's stop. Where b.Loop
// asks past the mirror's stop (another Go version), the run goes on in
// chunks growing from 16. Call it before the first Next; it allocates
// the samples' buffer, for d at one round trip a microsecond (at most
// 2^20). A fixed count (Expect) wins; under a conductor it does nothing.
func (r *Run) ExpectFor(d time.Duration) {
	if r.turns != nil || d <= 0 || r.n != 0 || r.expect > 0 {
		return
	}
	r.budget = d
	r.reserve(int(min(d/time.Microsecond, expectMax)))
}

// reserve makes room for n samples in one chunk. A large buffer is
// allocated before the loop with the collector run and the memory
// returned at once, so that neither a collection it would trigger nor the
// scavenger runs while the loop measures (see startRun).
func (r *Run) reserve(n int) {
	if len(r.buf) >= n+1 {
		return
	}
	r.buf = make([]int64, n+1)
	if n >= 1<<17 { // 1 MiB
		debug.FreeOSMemory()
	}
}

// nextChunk returns the number of round trips of the next C call.
func (r *Run) nextChunk() int {
	switch {
	case r.expect > 0:
		n := min(r.expect, len(r.buf)-1)
		r.expect -= n
		return n
	case r.budget > 0:
		// Timed from the first Next, just after b.Loop starts its timer.
		// The target mirrors b.Loop's exactly (its next one scales with
		// it, up to 100 times); each call runs a little past it, 1/256
		// and one, since the time read here lags b.Loop's by nanoseconds
		// and can round a prediction one short. b.Loop then checks within
		// the call, and both predict from the same elapsed time.
		if r.ran == 0 {
			r.began, r.target = time.Now(), 1
		} else if r.ran >= r.target+r.target/256+1 {
			next, past := loopTarget(r.budget, time.Since(r.began), r.target)
			if past { // b.Loop should have stopped: it asks for more
				r.budget, r.chunk = 0, firstChunk/2
				return r.nextChunk()
			}
			r.target = next
		}
		return max(1, min(r.target+r.target/256+1-r.ran, len(r.buf)-1))
	default:
		return min(2*r.chunk, maxChunk)
	}
}

// loopTarget is what testing's b.Loop does under -benchtime=budget when
// the count reaches its target prev after elapsed (stopOrScaleBLoop and
// predictN in Go 1.24-1.26): past is true when it stops; otherwise next is
// its next target, the count that would fill budget at the rate so far
// plus a fifth, at most 100 times prev, at least prev+1.
func loopTarget(budget, elapsed time.Duration, prev int) (next int, past bool) {
	if elapsed >= budget {
		return 0, true
	}
	ns := max(elapsed.Nanoseconds(), 1)
	n := budget.Nanoseconds() * int64(prev) / ns
	n += n / 5
	n = min(n, 100*int64(prev))
	n = max(n, int64(prev)+1)
	n = min(n, 1e9)
	return int(n), false
}
