package verbs

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
	"weak"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
)

// CompChannel is a completion event channel (struct ibv_comp_channel). Its
// file descriptor is non-blocking; Wait polls it with a deadline.
type CompChannel struct {
	object
	ctx *Context
	fd  int

	mu  sync.Mutex
	cqs map[unsafe.Pointer]weak.Pointer[CQ]
}

// CreateCompChannel creates a completion channel. Equivalent to
// ibv_create_comp_channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	const op = "ibv_create_comp_channel"
	p, err := c.ptrOr(op)
	if err != nil {
		return nil, err
	}
	if err := addChildren(op, &c.object); err != nil {
		return nil, err
	}
	cp, fd, err := ibvCreateCompChannel(p)
	if err != nil {
		childrenGone(&c.object)
		return nil, err
	}
	if err := setNonblock(fd); err != nil {
		_ = ibvDestroyCompChannel(cp)
		childrenGone(&c.object)
		return nil, &Error{Op: "set O_NONBLOCK on completion channel", Err: err}
	}
	ch := &CompChannel{ctx: c, fd: fd, cqs: make(map[unsafe.Pointer]weak.Pointer[CQ])}
	track(ch, &ch.object, kindCompChannel, cp, ibvDestroyCompChannel, &c.object)
	return ch, nil
}

// Close destroys the channel (ibv_destroy_comp_channel). It fails with
// ErrInUse while CQs attached to it are open. Idempotent and nil-safe.
func (ch *CompChannel) Close() error {
	if ch == nil {
		return nil
	}
	return ch.close("ibv_destroy_comp_channel", "CQs")
}

// Wait waits until a CQ attached to the channel has a completion event, and
// returns that CQ (ibv_get_cq_event, then ibv_ack_cq_events). Request the
// event first with RequestNotify. A zero deadline waits for ever; once the
// deadline passes Wait fails with an error matching os.ErrDeadlineExceeded.
func (ch *CompChannel) Wait(deadline time.Time) (*CQ, error) {
	const op = "ibv_get_cq_event"
	if ch == nil {
		return nil, errClosed(op)
	}
	for {
		p := ch.live()
		if p == nil {
			return nil, errClosed(op)
		}
		cqp, err := ibvGetCQEvent(p)
		if err == nil {
			ibvAckCQEvents(cqp, 1)
			ch.mu.Lock()
			cq := ch.cqs[cqp].Value()
			ch.mu.Unlock()
			if cq == nil {
				return nil, &Error{Op: op, Err: syscall.ENOENT, Detail: "event for a CQ no longer open"}
			}
			return cq, nil
		}
		if !errors.Is(err, syscall.EAGAIN) {
			return nil, err
		}
		timeout := -1
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return nil, &Error{Op: op, Err: os.ErrDeadlineExceeded}
			}
			timeout = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		if err := rdmacore.WaitReadable(ch.fd, timeout); err != nil {
			return nil, &Error{Op: "poll completion channel", Err: err}
		}
	}
}

// CQ is a completion queue (struct ibv_cq).
type CQ struct {
	object
	ctx *Context
	ch  *CompChannel
}

// CreateCQ creates a completion queue of at least cqe entries, attached to
// ch if it is not nil. Equivalent to ibv_create_cq.
func (c *Context) CreateCQ(cqe int, ch *CompChannel) (*CQ, error) {
	const op = "ibv_create_cq"
	p, err := c.ptrOr(op)
	if err != nil {
		return nil, err
	}
	if cqe <= 0 {
		return nil, &Error{Op: op, Err: syscall.EINVAL, Detail: "cqe must be positive"}
	}
	parents := []*object{&c.object}
	var chp unsafe.Pointer
	if ch != nil {
		if chp = ch.live(); chp == nil {
			return nil, errClosed(op + ": completion channel")
		}
		parents = append(parents, &ch.object)
	}
	if err := addChildren(op, parents...); err != nil {
		return nil, err
	}
	cp, err := ibvCreateCQ(p, cqe, chp)
	if err != nil {
		childrenGone(parents...)
		return nil, err
	}
	cq := &CQ{ctx: c, ch: ch}
	track(cq, &cq.object, kindCQ, cp, ibvDestroyCQ, parents...)
	if ch != nil {
		ch.mu.Lock()
		ch.cqs[cp] = weak.Make(cq)
		ch.mu.Unlock()
	}
	return cq, nil
}

// Poll fills wc with up to len(wc) completions and returns how many it
// found (ibv_poll_cq). It is one cgo call and allocates nothing. Each
// completion carries its own status: see WorkCompletion.Err.
func (cq *CQ) Poll(wc []WorkCompletion) (int, error) {
	p := cq.ptr
	if p == nil {
		return 0, errClosed("ibv_poll_cq")
	}
	if len(wc) == 0 {
		return 0, nil
	}
	n := ibvPollCQ(p, wc)
	runtime.KeepAlive(cq)
	if n < 0 {
		return 0, &Error{Op: "ibv_poll_cq", Err: syscall.EIO, Detail: "provider returned " + strconv.Itoa(n)}
	}
	return n, nil
}

// RequestNotify arms the CQ so that its next completion (or next solicited
// one) raises an event on its channel. Equivalent to ibv_req_notify_cq.
func (cq *CQ) RequestNotify(solicitedOnly bool) error {
	p := cq.ptr
	if p == nil {
		return errClosed("ibv_req_notify_cq")
	}
	err := ibvReqNotifyCQ(p, solicitedOnly)
	runtime.KeepAlive(cq)
	return err
}

// Close destroys the CQ (ibv_destroy_cq). It fails with ErrInUse while QPs
// use it. Idempotent and nil-safe.
func (cq *CQ) Close() error {
	if cq == nil {
		return nil
	}
	p := cq.live()
	if err := cq.close("ibv_destroy_cq", "QPs"); err != nil {
		return err
	}
	if cq.ch != nil && p != nil {
		cq.ch.mu.Lock()
		delete(cq.ch.cqs, p)
		cq.ch.mu.Unlock()
	}
	return nil
}
