// Package loops holds the measured loops of every latency test, in C: one
// .c file per operation family (write.c: RDMA WRITE over RC and UC;
// send.c: the receive-driven ping-pong of SEND, SEND with immediate and
// WRITE with immediate over RC, UC and UD; read.c: RDMA READ; atomic.c:
// FETCH_AND_ADD and COMPARE_AND_SWAP), sharing loops.h (write.c and send.c
// also pingpong.h, their turns written once), compiled with warnings as
// errors. Go calls a loop once per chunk of samples; nothing of
// the Go runtime runs inside one.
//
// Every loop checks that it measures what it says (counters in order on
// both sides, immediates carrying the sent counter, UD messages from the
// peer's QP, atomics returning the previous value), reads the clock once
// per sample, has a deadline on every wait, and can be told to stop from
// another goroutine.
package loops

import (
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// The loops' errors. They are rdmalat's (which re-exports them), hence
// the prefix: this package is the engine's inside.
var (
	// ErrTimeout: a wait on the peer or on a completion lasted longer than
	// the configured timeout.
	ErrTimeout = errors.New("rdmalat: timed out")
	// ErrOrder: what arrived is not what was sent: a counter out of order,
	// a wrong immediate, a UD message from another QP, an atomic's old
	// value other than the word's previous one.
	ErrOrder = errors.New("rdmalat: round trip out of order")
	// ErrStopped: the loop was told to stop.
	ErrStopped = errors.New("rdmalat: stopped")
)

// UDQKey is the Q_Key of every UD queue pair, perftest's.
const UDQKey = 0x11111111

// DefaultRxDepth is how many receives a receiving side keeps posted, all
// on one buffer: perftest's default for send (512; it lowers it to the
// iteration count when that is smaller).
const DefaultRxDepth = 512

// PrepostMax is how many receives perftest pre-posts at most on UD and
// UC, where it posts one for every iteration and reposts none.
const PrepostMax = 16000

// RecvPlan returns how many receives a side over transport t keeps
// posted and the RepostBelow that goes with it, on a device that allows
// maxWR work requests per queue and maxCQE entries per CQ. On RC, as
// perftest: DefaultRxDepth, each reposted as it completes. On UD and UC,
// as perftest: up to PrepostMax pre-posted, none reposted while
// DefaultRxDepth or more remain, so that a run of up to about 15000 round
// trips posts no receive while it measures.
func RecvPlan(t spec.Transport, maxWR, maxCQE int) (depth, repostBelow int) {
	depth = max(min(DefaultRxDepth, maxWR, maxCQE), 1)
	if t != spec.UD && t != spec.UC {
		return depth, 0
	}
	full := min(PrepostMax, maxWR, maxCQE)
	if full < 2*DefaultRxDepth {
		return depth, 0 // too few to gain anything: repost each, as RC
	}
	return full, DefaultRxDepth
}

// Config describes one side's loop over a connected queue pair. Offsets
// are into MR, which both halves of the side's buffer live in.
type Config struct {
	Op        spec.Op
	Transport spec.Transport
	// Events waits for completions on the channels (perftest -e) instead
	// of busy-polling the CQs; not for Write, whose receiver has none.
	Events bool

	QP *verbs.QP
	// SendCQ takes send completions; RecvCQ receive completions, for the
	// operations that receive (spec.Op.Receives). With Events each has
	// its channel.
	SendCQ, RecvCQ           *verbs.CQ
	SendChannel, RecvChannel *verbs.CompChannel

	MR *verbs.MR
	// Send is where what is sent or written comes from, where a READ
	// lands, and where an atomic's old value lands (8-byte aligned).
	Send int
	// Recv is where the peer's data lands: its RDMA WRITE, or a receive's
	// payload (on UD the 40-byte GRH comes just before it).
	Recv int
	// RecvLen is the length of each receive, GRH included; 0 for WRITE
	// with immediate, whose receives are zero-length.
	RecvLen int
	Size    int
	Inline  bool

	RemoteAddr uint64 // the peer's buffer (write, read) or 8-byte word (atomics)
	RKey       uint32
	// AH and RemoteQPN address UD sends; every UD receive must come from
	// RemoteQPN.
	AH        *verbs.AH
	RemoteQPN uint32

	// RxDepth receives are kept posted; Posted were posted already (they
	// stay on the queue pair from one loop to the next).
	RxDepth, Posted int
	// RepostBelow 0 reposts each receive as it completes (perftest's
	// RC); above 0 the loop reposts nothing while RepostBelow or more
	// are posted (perftest's UD and UC pre-post every iteration's receive
	// and repost none), and one per receive below that.
	RepostBelow int
	Timeout     time.Duration
	// Gap is the idle time before each of the initiator's round trips
	// (RDMABENCH_GAP), left out of its samples; 0: back to back. A
	// responder's loop ignores it.
	Gap time.Duration
}

// MaxGap is the longest Gap: a second between round trips already makes
// a run of a few thousand samples last an hour.
const MaxGap = time.Second

func (c *Config) check() error {
	if err := c.Transport.Carries(c.Op); err != nil {
		return err
	}
	if c.Events && !c.Op.Events() {
		return fmt.Errorf("events: %v has no completion to wait for on the receiving side (perftest refuses -e for it); use write_imm", c.Op)
	}
	if c.QP == nil || c.SendCQ == nil || c.MR == nil {
		return errors.New("loops: QP, SendCQ and MR are required")
	}
	if c.Op.Receives() && c.RecvCQ == nil {
		return fmt.Errorf("loops: %v needs a receive CQ", c.Op)
	}
	if c.Events && (c.SendChannel == nil || (c.Op.Receives() && c.RecvChannel == nil)) {
		return errors.New("loops: events need a completion channel for each CQ")
	}
	if c.Transport == spec.UD && (c.AH == nil || c.RemoteQPN == 0) {
		return errors.New("loops: UD needs an address handle and the peer's QPN")
	}
	if c.Size < 1 || c.Send < 0 || c.Send+c.Size > c.MR.Len() || c.Recv < 0 || c.Recv+c.Size > c.MR.Len() {
		return fmt.Errorf("loops: size %d at offsets %d and %d outside the %d-byte region", c.Size, c.Send, c.Recv, c.MR.Len())
	}
	if c.Op.Atomic() && (c.Size != spec.AtomicSize || (c.MR.Addr()+uint64(c.Send))%8 != 0 || c.RemoteAddr%8 != 0) {
		return fmt.Errorf("loops: %v needs 8 bytes at 8-byte aligned addresses", c.Op)
	}
	if c.Op.Receives() && (c.RxDepth < 1 || c.Posted < 0 || c.Posted > c.RxDepth) {
		return fmt.Errorf("loops: rx depth %d with %d posted", c.RxDepth, c.Posted)
	}
	if c.RepostBelow < 0 || c.RepostBelow > c.RxDepth {
		return fmt.Errorf("loops: repost below %d with rx depth %d: want 0 (repost each receive) up to the depth", c.RepostBelow, c.RxDepth)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("loops: timeout %v: want a positive duration", c.Timeout)
	}
	if c.Gap < 0 || c.Gap > MaxGap || c.Gap >= c.Timeout {
		return fmt.Errorf("loops: gap %v: want 0 up to %v and shorter than the timeout %v (the responder waits out the gap)", c.Gap, MaxGap, c.Timeout)
	}
	return nil
}
