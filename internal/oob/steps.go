package oob

// The protocol's steps, one method per message a side sends or expects;
// conn.go has the connection they run over.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// SendHello sends h.
func (c *Conn) SendHello(h Hello) error { return c.Send(h) }

// RecvHello receives a Hello.
func (c *Conn) RecvHello() (Hello, error) {
	m, err := c.expect(TypeHello, c.timeout())
	if err != nil {
		return Hello{}, err
	}
	return m.(Hello), nil
}

// SendParams sends p. It does not validate p: the peer does.
func (c *Conn) SendParams(p Params) error { return c.Send(p) }

// RecvParams receives Params within Timeout.
func (c *Conn) RecvParams() (Params, error) {
	m, err := c.expect(TypeParams, c.timeout())
	if err != nil {
		return Params{}, err
	}
	return m.(Params), nil
}

// Next is rdmapeer's wait for the client's next request (Params or Run):
// it receives a message of any type within idle (no limit if idle <= 0)
// and returns io.EOF itself when the client closed the connection cleanly
// between messages. An Error from the client is returned as an *Error.
func (c *Conn) Next(idle time.Duration) (Message, error) {
	m, err := c.recv(idle)
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, c.recvErr(err, "request (Params or Run)", idle)
	}
	if e, ok := m.(Error); ok {
		return nil, &e
	}
	return m, nil
}

// SendEndpoint sends e.
func (c *Conn) SendEndpoint(e Endpoint) error { return c.Send(e) }

// RecvEndpoint receives an Endpoint.
func (c *Conn) RecvEndpoint() (Endpoint, error) {
	m, err := c.expect(TypeEndpoint, c.timeout())
	if err != nil {
		return Endpoint{}, err
	}
	return m.(Endpoint), nil
}

// SendRun sends Run{seq, size}.
func (c *Conn) SendRun(seq, size uint32) error { return c.Send(Run{Seq: seq, Size: size}) }

// RecvBarrier receives the peer's Barrier and checks that it carries seq.
func (c *Conn) RecvBarrier(seq uint32) error {
	m, err := c.expect(TypeBarrier, c.timeout())
	if err != nil {
		return err
	}
	if got := m.(Barrier).Seq; got != seq {
		return fmt.Errorf("%w: barrier out of step: expected %d, %s sent %d", ErrProtocol, seq, c.who(), got)
	}
	return nil
}

// Barrier sends Barrier{seq} and waits for the peer's Barrier with the same
// seq, for two sides that must both be ready. Both sides call it; the send runs alongside the receive, so it works
// on unbuffered connections too.
func (c *Conn) Barrier(seq uint32) error {
	sent := make(chan error, 1)
	go func() { sent <- c.Send(Barrier{Seq: seq}) }()
	m, err := c.expect(TypeBarrier, c.timeout())
	serr := <-sent
	if err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if got := m.(Barrier).Seq; got != seq {
		return fmt.Errorf("%w: barrier out of step: sent %d, %s sent %d", ErrProtocol, seq, c.who(), got)
	}
	return nil
}

// SendDone sends Done{roundTrips}.
func (c *Conn) SendDone(roundTrips uint64) error { return c.Send(Done{RoundTrips: roundTrips}) }

// RecvDone receives Done and returns its round-trip count.
func (c *Conn) RecvDone() (uint64, error) {
	m, err := c.expect(TypeDone, c.timeout())
	if err != nil {
		return 0, err
	}
	return m.(Done).RoundTrips, nil
}

// SendError sends Error{code, msg}. Unlike Send it never fails on msg:
// invalid UTF-8 is replaced and a msg over MaxString is cut short.
func (c *Conn) SendError(code Code, msg string) error {
	return c.SendErrorMessage(Error{Code: code, Msg: msg})
}

// SendErrorMessage sends e, its Msg made valid as SendError makes it: the
// way to send an Error with a completion's fields (CodeCompletion).
func (c *Conn) SendErrorMessage(e Error) error {
	msg := strings.ToValidUTF8(e.Msg, "\uFFFD")
	if len(msg) > MaxString {
		const more = "..."
		cut := MaxString - len(more)
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + more
	}
	e.Msg = msg
	return c.Send(e)
}

// SendErr reports err to the peer with the Code that matches it
// (ErrInvalidParams: CodeParams, ErrBusy: CodeBusy, ErrVersion:
// CodeVersion, ErrProtocol and ErrMalformed: CodeProtocol,
// os.ErrDeadlineExceeded: CodeTimeout, else CodeInternal).
func (c *Conn) SendErr(err error) error {
	code := CodeInternal
	switch {
	case errors.Is(err, ErrInvalidParams):
		code = CodeParams
	case errors.Is(err, ErrBusy):
		code = CodeBusy
	case errors.Is(err, ErrVersion):
		code = CodeVersion
	case errors.Is(err, ErrAuth):
		code = CodeAuth
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrMalformed):
		code = CodeProtocol
	case errors.Is(err, os.ErrDeadlineExceeded):
		code = CodeTimeout
	}
	return c.SendError(code, err.Error())
}
