package rdmalat

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/turn"
)

// Responder answers the initiator's round trips during one Run: a pinned
// goroutine on a local endpoint in loopback mode, or a peer process reached
// over the network in two-node mode.
type Responder interface {
	// Start makes the responder ready to answer round trips of size bytes;
	// it returns once the responder waits for the first one. If the
	// responder fails while the initiator's loop runs (its peer process
	// died, its own loop failed) it calls abort with the reason: the
	// initiator's loop then ends at once with that error instead of waiting
	// for its timeout. abort may be called from any goroutine, any number
	// of times, until Stop returns.
	Start(size int, abort func(error)) error
	// Stop ends the responder's loop and returns how many round trips it
	// answered, and its error, if any. Stop is called once for each
	// successful Start.
	Stop() (answered uint64, err error)
}

// runEnder is implemented by a Responder that must know how the
// initiator's run ended before its Stop: ran is the number of round trips
// the initiator ran, warm-up included, and runErr the error its loop ended
// with. The remote responder sends ran to its peer, and after a failed run
// drops the session at once rather than wait on a peer that may be
// stalled.
type runEnder interface {
	endRun(ran uint64, runErr error)
}

// runConfig is the part of a Run that can vary per run.
type runConfig struct {
	Size    int
	Warmup  int           // round trips run first and not returned
	Timeout time.Duration // longest wait for the peer or a completion
	CPU     env.CPU       // the initiator's
	Gap     time.Duration // idle before each round trip, not in the samples
}

const (
	firstChunk = 16
	maxChunk   = 4096
	// expectMax bounds the chunk of a run told its length (Expect): 8 MiB
	// of samples.
	expectMax = 1 << 20
)

// Run is one measurement of latency at one size, from the initiator's
// side, for the endpoint's operation (round trips of a ping-pong, or
// one-sided operations). Next hands out one round-trip time per call; the
// round trips themselves run in C, a chunk at a time, so the measured loop
// holds no Go code. Chunks grow from 16 to 4096 round trips, each run with
// one unrecorded lead round trip (see Next); the round trips of a last
// chunk that are never asked for are run but not returned.
type Run struct {
	device  string // the initiator's, for its errors
	loop    *cLoop
	resp    Responder
	started bool
	unpin   func()
	others  func() // gives the process's other threads their CPUs back
	quiet   func() // restores GOMAXPROCS
	buf     []int64
	chunk   int    // round trips in the current chunk
	i, n    int    // next sample and end of the current chunk in buf
	total   uint64 // round trips run, warm-up included
	expect  int    // samples still expected (Expect) and not yet run
	err     error
	cause   atomic.Pointer[error] // why the responder aborted the loop

	// pingPong: the responder answers each round trip (not READ or an
	// atomic, whose responder runs nothing and answers none).
	pingPong bool

	// Under a conductor (see turnTaking): the socket to it, the parked
	// responder, the label and run number bursts are reported under, the
	// bursts so far, and room to sort a burst for its summary.
	turns      *turn.Client
	parker     turnParker
	label      string
	runNo, seq int
	sorted     []int64
}

// turnParker is a responder that can stop answering between turns without
// spinning (localResponder). A remote peer cannot: its process is not the
// conductor's to hold.
type turnParker interface {
	allowParking()
	park() error
	resume() error
}

// startRun starts the responder, pins the calling goroutine's thread to
// cfg.CPU, runs the warm-up round trips and returns the Run ready for Next.
// Call Close on the same goroutine.
func startRun(local *Endpoint, remote PeerInfo, resp Responder, cfg runConfig) (_ *Run, err error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	r := &Run{resp: resp, buf: newSampleBuffer(maxChunk + 1), pingPong: !local.cfg.Op.OneSided(), device: local.ctx.Name()}
	defer func() {
		if err == nil {
			return
		}
		// A warm-up that failed on an error completion: the peer's account
		// of it (rdmapeer's, which Close waits for a moment) joins this
		// side's, first, as the cause (this side's REM_OP_ERR follows from
		// the peer's failure), so that errors.As finds the peer's.
		var peer *peerCompletionError
		if cerr := r.Close(); isCompletion(err) && errors.As(cerr, &peer) && !errors.As(err, &peer) {
			err = errors.Join(cerr, err)
		}
	}()
	// Quiesce the Go runtime first: testing.B runs a GC just before each
	// benchmark, after which the background scavenger returns freed pages
	// to the kernel for a while. Each of its madvise calls flushes the TLB
	// of every CPU running this process, interrupting the busy-polling
	// threads mid round trip (seen in the soft-RoCE VM as bursts of
	// round trips 3x slower). Returning the memory now, before the
	// warm-up, leaves the scavenger nothing to do while we measure.
	debug.FreeOSMemory()
	r.quiet = quietScheduler()
	if r.unpin, err = pinThread(cfg.CPU); err != nil {
		return nil, err
	}
	if r.loop, err = newCLoop(local, remote, cfg.Size, cfg.Timeout, cfg.Gap); err != nil {
		return nil, err
	}
	if r.turns, err = turn.FromEnv(turnTimeout); err != nil {
		return nil, err
	}
	if r.turns != nil {
		p, ok := resp.(turnParker)
		if !ok {
			return nil, fmt.Errorf("rdmalat: %s is set (a duet's conductor) but this run's responder is a remote peer, which cannot be held between turns: run the duet with loopback pairs, or unset it", turn.EnvFD)
		}
		r.parker = p
		p.allowParking()
		r.sorted = make([]int64, maxChunk)
		r.label, r.runNo = "run", nextRunNo("run")
		// The responder starts spinning in Start: only in our turn.
		if _, err = r.turns.Acquire(); err != nil {
			return nil, err
		}
	}
	if err = resp.Start(cfg.Size, r.abort); err != nil {
		return nil, fmt.Errorf("rdmalat: starting the responder: %w", err)
	}
	r.started = true
	polling := []env.CPU{cfg.CPU}
	if lr, ok := resp.(*localResponder); ok && !local.cfg.Op.OneSided() {
		polling = append(polling, lr.cpu)
	}
	r.others = env.KeepOthersOff(polling...)
	if r.turns != nil {
		if err = r.warmUpInTurn(cfg.Warmup); err != nil {
			return nil, fmt.Errorf("rdmalat: warm-up: %w", err)
		}
		return r, nil
	}
	for left := cfg.Warmup; left > 0; {
		n := min(left, maxChunk)
		if err = r.ping(r.buf[:n]); err != nil {
			r.err = err
			return nil, fmt.Errorf("rdmalat: warm-up: %w", err)
		}
		r.total += uint64(n)
		left -= n
	}
	r.chunk = firstChunk / 2 // the first fill doubles it
	return r, nil
}

// Next returns the next round-trip time in nanoseconds.
func (r *Run) Next() (int64, error) {
	if r.i == r.n {
		if r.err != nil {
			return 0, r.err
		}
		// Each chunk runs one lead round trip more and leaves it out: the
		// first round trip after the thread comes back from Go is slow.
		// Measured in the VM: the slowest 1% of a 5000-sample run sat
		// at the chunk starts (indices 112, 240, 496, 1008), most likely
		// the runtime handing this thread's P to another thread as the
		// C call begins. perftest, one loop from start to end, has no
		// such seam, and with the lead round trip neither do we.
		if r.turns != nil {
			if r.err = r.burst(); r.err != nil {
				return 0, r.err
			}
			r.total += uint64(r.chunk + 1)
			r.i, r.n = 1, r.chunk+1
			return r.Next()
		}
		if r.expect > 0 {
			r.chunk = min(r.expect, len(r.buf)-1)
			r.expect -= r.chunk
		} else {
			r.chunk = min(2*r.chunk, maxChunk)
		}
		if r.err = r.ping(r.buf[:r.chunk+1]); r.err != nil {
			return 0, r.err
		}
		r.total += uint64(r.chunk + 1)
		r.i, r.n = 1, r.chunk+1
	}
	v := r.buf[r.i]
	r.i++
	return v, nil
}

// Expect says that exactly n more samples will be asked for, as by a
// benchmark run with -benchtime=Nx. They then run in one C call (up to
// 2^20 at a time) instead of in chunks growing from 16, so that the run,
// like perftest's one loop, has no seams: each return from C to Go wakes
// the runtime's sysmon, which then polls for a while on a CPU that does
// not measure, and in the soft-RoCE VM that takes host time from the
// polling vCPUs (more stalls, a higher p99 than perftest's one loop).
// Call it before the first Next; it allocates the samples' buffer (8
// bytes a sample) and faults it in, outside the measurement. Under a
// conductor, whose bursts set the chunks, it does nothing.
func (r *Run) Expect(n int) {
	if r.turns != nil || n <= 0 || r.n != 0 {
		return
	}
	r.expect = n
	if need := min(n, expectMax) + 1; len(r.buf) < need {
		r.buf = newSampleBuffer(need)
	}
}

// abort ends the initiator's loop on the responder's behalf.
func (r *Run) abort(err error) {
	if err == nil {
		err = errors.New("rdmalat: the responder aborted the run")
	}
	if r.cause.CompareAndSwap(nil, &err) {
		r.loop.stop()
	}
}

// ping runs one chunk and turns a stop raised by abort into its cause.
func (r *Run) ping(rtt []int64) error {
	err := r.loop.ping(rtt)
	if errors.Is(err, ErrStopped) {
		if c := r.cause.Load(); c != nil {
			return *c // the responder's, which says so
		}
	}
	if err != nil && !errors.Is(err, ErrStopped) {
		// Say which side failed: the responder's errors say "responder".
		return fmt.Errorf("rdmalat: initiator on %s: %w", r.device, err)
	}
	return err
}

// RoundTrips returns the number of round trips run so far, warm-up
// included.
func (r *Run) RoundTrips() uint64 { return r.total }

// Close stops the responder, frees the loop and unpins the thread. It
// returns the responder's error, if any, and an error if the responder did
// not answer exactly the round trips this side ran. Close is idempotent.
func (r *Run) Close() error {
	var errs []error
	if r.started {
		r.started = false
		if e, ok := r.resp.(runEnder); ok {
			e.endRun(r.total, r.err)
		}
		answered, err := r.resp.Stop()
		errs = append(errs, err)
		if err == nil && r.err == nil && r.pingPong && answered != r.total {
			errs = append(errs, fmt.Errorf("%w: the responder answered %d round trips, the initiator ran %d", ErrOrder, answered, r.total))
		}
	}
	// Only now: the responder may call abort, which touches the loop, until
	// its Stop returns.
	if r.loop != nil {
		r.loop.free()
		r.loop = nil
	}
	if r.others != nil {
		r.others()
		r.others = nil
	}
	if r.unpin != nil {
		r.unpin()
		r.unpin = nil
	}
	if r.quiet != nil {
		r.quiet()
		r.quiet = nil
	}
	return errors.Join(errs...)
}

var quietMu sync.Mutex
var quietRuns, savedProcs int

// Whether GOMAXPROCS was the runtime's automatic choice when the process
// started (unset in the environment, automatic updates not turned off),
// and its value then. Under go test, testing sets GOMAXPROCS explicitly
// before every test and benchmark; restoring the automatic setting there
// gives back the same value, and testing sets it again before the next.
var (
	startProcs = runtime.GOMAXPROCS(0)
	startAuto  = os.Getenv("GOMAXPROCS") == "" && !strings.Contains(os.Getenv("GODEBUG"), "updatemaxprocs=0")
)

// quietScheduler lowers GOMAXPROCS to 1 while any Run is open, and the
// returned function restores it when the last one closes. The measured
// loops run in C on locked threads and hold no P; with more Ps, the
// scheduler wakes idle Ps and spins threads looking for work, and in the
// soft-RoCE VM that doubled the 2-byte p99 against perftest's (1 P: 0.9x,
// 4 Ps: 1.1-1.7x, same boot; see the issue notes). Changing GOMAXPROCS
// stops the world, so it happens here, outside the measured loop.
func quietScheduler() func() {
	quietMu.Lock()
	defer quietMu.Unlock()
	if quietRuns == 0 {
		savedProcs = runtime.GOMAXPROCS(1)
	}
	quietRuns++
	var once sync.Once
	return func() {
		once.Do(func() {
			quietMu.Lock()
			defer quietMu.Unlock()
			if quietRuns--; quietRuns == 0 {
				restoreProcs(savedProcs)
			}
		})
	}
}

// restoreProcs puts GOMAXPROCS back to saved. runtime.GOMAXPROCS(n) also
// turns off the runtime's automatic updates (Go 1.25+: GOMAXPROCS follows
// CPU affinity and cgroup limits), so where the setting was automatic and
// still had its automatic value, it is handed back to the runtime instead.
func restoreProcs(saved int) {
	if startAuto && saved == startProcs {
		runtime.SetDefaultGOMAXPROCS()
		if runtime.GOMAXPROCS(0) == saved {
			return
		}
		// The default moved (affinity changed since start): whoever set
		// saved expects it back (testing checks that a benchmark leaves
		// GOMAXPROCS as it found it).
	}
	runtime.GOMAXPROCS(saved)
}
