package oob

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Watcher watches a Conn while the RDMA loop runs and no messages are
// expected. See Conn.Watch.
type Watcher struct {
	c        *Conn
	onFail   func(error)
	stopping atomic.Bool
	err      atomic.Pointer[error]
	failed   chan struct{}
	exited   chan struct{}
	stopOnce sync.Once
}

// Watch starts a goroutine that blocks reading the connection, with no
// deadline, until Stop. It reports a failure at once: the connection closed
// or reset (the peer process died: its kernel closes the socket), or an
// Error from the peer. On a failure it stores the error (Err), closes
// Failed and calls onFail (if not nil) from its goroutine. A message other
// than Error (the peer's Done, say) ends the watch without a failure and is
// returned by the next receive after Stop. The measured loop need not
// touch the socket: it may poll Err, a cheap atomic load, or let onFail set
// its own flag.
//
// While a Watcher runs, sends are allowed and receives fail. Watch panics
// if another Watcher of c has not been stopped.
func (c *Conn) Watch(onFail func(error)) *Watcher {
	w := &Watcher{c: c, onFail: onFail, failed: make(chan struct{}), exited: make(chan struct{})}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.watcher != nil {
		panic("oob: Watch while another Watcher of the Conn is active")
	}
	c.watcher = w
	if c.pending != nil || c.closed.Load() {
		close(w.exited) // the peer has already spoken, or we closed
		return w
	}
	_ = c.nc.SetReadDeadline(time.Time{}) // fails only on a closed conn, whose read then fails at once
	go w.run()
	return w
}

func (w *Watcher) run() {
	defer close(w.exited)
	c := w.c
	frame, err := c.readFrame()
	if err == nil {
		m, derr := Decode(frame)
		switch {
		case derr != nil:
			c.rerr = derr
			err = derr
		case m.Type() == TypeError:
			e := m.(Error)
			w.fail(&e)
			return
		default:
			c.pending = m
			return
		}
	}
	if w.stopping.Load() || c.closed.Load() {
		return // Stop or Close: not a failure
	}
	switch {
	case errors.Is(err, io.EOF):
		err = fmt.Errorf("%w: %s closed the connection during the run (its process exited or was killed): %w", ErrPeerLost, c.who(), err)
	case errors.Is(err, ErrMalformed), errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("%w: %w", ErrPeerLost, err)
	default:
		err = fmt.Errorf("%w: %s: %w", ErrPeerLost, c.who(), err)
	}
	w.fail(err)
}

func (w *Watcher) fail(err error) {
	if w.err.CompareAndSwap(nil, &err) {
		close(w.failed)
		if w.onFail != nil {
			w.onFail(err)
		}
	}
}

// Err returns the failure seen so far, or nil. It is an atomic load, cheap
// enough for a measured loop to poll now and then.
func (w *Watcher) Err() error {
	if p := w.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Failed is closed when the Watcher sees a failure.
func (w *Watcher) Failed() <-chan struct{} { return w.failed }

// Ended is closed when the Watcher stops reading, for any reason: a message
// arrived (the next receive after Stop returns it), a failure (Err), Stop,
// or Close. A side that waits for its peer's next message during the loop
// (rdmapeer waiting for Done) selects on it.
func (w *Watcher) Ended() <-chan struct{} { return w.exited }

// Stop ends the watch, unblocking the read with a past deadline, and waits
// for the goroutine to exit. A frame cut in half by Stop is kept and
// finished by the next receive, so the Conn stays usable. Stop returns
// Err(); it is idempotent.
func (w *Watcher) Stop() error {
	w.stopOnce.Do(func() {
		c := w.c
		w.stopping.Store(true)
		_ = c.nc.SetReadDeadline(aLongTimeAgo) // fails only on a closed conn, which also unblocks the read
		<-w.exited
		c.rmu.Lock()
		c.watcher = nil
		c.rmu.Unlock()
	})
	return w.Err()
}
