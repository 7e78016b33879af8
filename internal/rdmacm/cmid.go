package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
)

var openIDs, openChannels atomic.Int64

// OpenObjects returns how many rdma_cm ids ("cm_id") and event channels
// ("event_channel") this package holds open in the process, for leak
// checks in tests.
func OpenObjects() map[string]int {
	return map[string]int{"cm_id": int(openIDs.Load()), "event_channel": int(openChannels.Load())}
}

// DefaultTimeout bounds Dial and Accept when their context has no
// deadline: no wait on a peer is unbounded.
const DefaultTimeout = 30 * time.Second

// pollSlice is the longest single poll on an event channel, so that a
// cancelled context or a Close is noticed promptly.
const pollSlice = 100 * time.Millisecond

// cmID is an rdma_cm_id with an event channel of its own, so that its
// events never mix with another id's. A cmID from a connection request
// starts on the listener's channel and moves to its own (rdma_migrate_id).
type cmID struct {
	mu sync.Mutex
	ch unsafe.Pointer // struct rdma_event_channel *
	fd int
	id unsafe.Pointer // struct rdma_cm_id *
}

// cmRelease is what destroys a cmID's C objects; the runtime cleanup's
// argument, so it must not refer to the cmID.
type cmRelease struct{ ch, id unsafe.Pointer }

func (r cmRelease) run() {
	if r.id != nil {
		_ = rdmaDestroyID(r.id)
		openIDs.Add(-1)
	}
	if r.ch != nil {
		rdmaDestroyEventChannel(r.ch)
		openChannels.Add(-1)
	}
}

func newChannel() (unsafe.Pointer, int, error) {
	ch, fd, err := rdmaCreateEventChannel()
	if err != nil {
		return nil, -1, err
	}
	openChannels.Add(1)
	return ch, fd, nil
}

// newCMID creates an event channel and an id on it (rdma_create_id).
func newCMID(ps portSpace) (*cmID, error) {
	ch, fd, err := newChannel()
	if err != nil {
		return nil, err
	}
	id, err := rdmaCreateID(ch, ps)
	if err != nil {
		cmRelease{ch: ch}.run()
		return nil, err
	}
	openIDs.Add(1)
	return &cmID{ch: ch, fd: fd, id: id}, nil
}

// adoptRequest gives the id of a connection request its own channel.
func adoptRequest(id unsafe.Pointer) (*cmID, error) {
	openIDs.Add(1)
	ch, fd, err := newChannel()
	if err != nil {
		cmRelease{id: id}.run()
		return nil, err
	}
	if err := rdmaMigrateID(id, ch); err != nil {
		_ = rdmaReject(id, nil)
		cmRelease{ch: ch, id: id}.run()
		return nil, err
	}
	return &cmID{ch: ch, fd: fd, id: id}, nil
}

// destroy destroys the id, then its channel. Idempotent.
func (c *cmID) destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	if c.id != nil {
		err = rdmaDestroyID(c.id)
		openIDs.Add(-1)
		c.id = nil
	}
	if c.ch != nil {
		rdmaDestroyEventChannel(c.ch)
		openChannels.Add(-1)
		c.ch = nil
	}
	return err
}

func (c *cmID) release() cmRelease { return cmRelease{ch: c.ch, id: c.id} }

// deadlineOf returns ctx's deadline, or DefaultTimeout from now.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(DefaultTimeout)
}

// timeoutMs is the time left until deadline in milliseconds, at least 1,
// for librdmacm's resolve timeouts.
func timeoutMs(deadline time.Time) int {
	return max(1, int(time.Until(deadline).Milliseconds()))
}

// next waits for the id's next CM event until deadline, or until ctx is
// cancelled or stop (if not nil) reports true. what names the awaited
// event for the error.
func (c *cmID) next(ctx context.Context, deadline time.Time, stop func() bool, what string) (event, error) {
	start := time.Now()
	for {
		ev, err := rdmaGetCMEvent(c.ch)
		if err == nil {
			return ev, nil
		}
		if !errors.Is(err, syscall.EAGAIN) {
			return event{}, err
		}
		if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return event{}, &Error{Op: "waiting for " + what, Err: err}
		}
		if stop != nil && stop() {
			return event{}, &Error{Op: "waiting for " + what, Err: os.ErrClosed}
		}
		left := time.Until(deadline)
		if left <= 0 {
			return event{}, &Error{Op: "waiting for " + what, Err: os.ErrDeadlineExceeded,
				Detail: fmt.Sprintf("nothing after %v", time.Since(start).Round(time.Millisecond))}
		}
		ms := int(min(left, pollSlice).Milliseconds()) + 1
		if err := rdmacore.WaitReadable(c.fd, ms); err != nil {
			return event{}, &Error{Op: "poll on the rdma_cm event channel", Err: err}
		}
	}
}

// addCleanup registers the safety net that destroys c's C objects when
// owner becomes unreachable without Close.
func addCleanup[T any](owner *T, c *cmID) runtime.Cleanup {
	return runtime.AddCleanup(owner, cmRelease.run, c.release())
}
