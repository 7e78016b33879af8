package oob_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
)

const helperEnv = "OOB_TEST_HELPER_PEER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		helperPeer()
		return
	}
	goleak.VerifyTestMain(m) // fails the run when a test leaves a goroutine behind
}

// helperPeer is a minimal rdmapeer run as a separate process, so that a test
// can SIGKILL it: it prints its address, accepts one client, does the
// handshake and one barrier, then waits to be killed.
func helperPeer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(ln.Addr())
	nc, err := ln.Accept()
	if err != nil {
		os.Exit(2)
	}
	c, err := oob.Accept(nc, 5*time.Second)
	if err != nil || c.Barrier(1) != nil {
		os.Exit(2)
	}
	time.Sleep(time.Minute)
	os.Exit(3) // not killed in time
}

// listen starts a 127.0.0.1 listener that hands each connection to serve in
// its own goroutine. serve should return when ctx is done; the listener and
// the connections are closed at the end of the test.
func listen(t *testing.T, serve func(ctx context.Context, nc net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer nc.Close()
				serve(ctx, nc)
			})
		}
	})
	return ln.Addr().String()
}

// pair returns the two ends of a handshaken connection over 127.0.0.1.
func pair(t *testing.T, timeout time.Duration) (client, server *oob.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	type result struct {
		c   *oob.Conn
		err error
	}
	srv := make(chan result, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			srv <- result{nil, err}
			return
		}
		c, err := oob.Accept(nc, timeout)
		srv <- result{c, err}
	}()
	client, err = oob.Dial(t.Context(), ln.Addr().String(), timeout)
	require.NoError(t, err)
	r := <-srv
	require.NoError(t, r.err)
	t.Cleanup(func() { client.Close(); r.c.Close() })
	return client, r.c
}

var (
	serverEP = oob.Endpoint{Device: "rxe0", LinkLayer: "Ethernet", Port: 1, QPN: 0x11, PSN: 0x123456,
		GID: [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 77, 15: 1}, GIDIndex: 1, MTU: 1024, RKey: 0x100, Addr: 0x7f0000001000, Size: 4096}
	clientEP = oob.Endpoint{Device: "rxe1", LinkLayer: "Ethernet", Port: 1, QPN: 0x12, PSN: 0x654321,
		GID: [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 77, 15: 2}, GIDIndex: 1, MTU: 1024, RKey: 0x200, Addr: 0x7f0000002000, Size: 4096}
)

// TestSession runs the whole sequence of the package doc on one
// connection: three sessions, the second with Params the peer rejects, each
// good one with two runs. The server is written the way rdmapeer is: it
// waits on the Watcher's Ended for the client's Done.
func TestSession(t *testing.T) {
	client, server := pair(t, 2*time.Second)
	assert.Equal(t, oob.Version, client.Peer().Version)
	assert.Equal(t, oob.DefaultSoftware(), client.Peer().Software)
	assert.Contains(t, server.Peer().Software, "rdmabench ")

	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			var session *oob.Params
			for {
				m, err := server.Next(5 * time.Second)
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				switch m := m.(type) {
				case oob.Params:
					session = nil
					if err := m.Validate(oob.DefaultLimits); err != nil {
						if err := server.SendErr(err); err != nil {
							return err
						}
						continue
					}
					if err := server.SendEndpoint(serverEP); err != nil {
						return err
					}
					ep, err := server.RecvEndpoint()
					if err != nil {
						return err
					}
					if ep != clientEP {
						return fmt.Errorf("got endpoint %+v", ep)
					}
					if err := server.Send(oob.Barrier{Seq: 0}); err != nil { // connected
						return err
					}
					session = &m
				case oob.Run:
					if session == nil || m.Size > session.Size {
						return fmt.Errorf("run %+v outside session %+v", m, session)
					}
					if err := server.Send(oob.Barrier{Seq: m.Seq}); err != nil {
						return err
					}
					w := server.Watch(nil)
					select { // the loop, until the client's Done
					case <-w.Ended():
					case <-time.After(5 * time.Second):
						return errors.New("no Done within 5 s")
					}
					if err := w.Stop(); err != nil {
						return err
					}
					n, err := server.RecvDone()
					if err != nil {
						return err
					}
					if err := server.SendDone(n + uint64(m.Seq)); err != nil {
						return err
					}
				default:
					return fmt.Errorf("unexpected %v", m.Type())
				}
			}
		}()
	}()

	good := oob.Params{Op: spec.Write, Transport: spec.RC, Size: 64, Inline: -1, GIDIndex: -1}
	for _, p := range []oob.Params{good, {Op: spec.Write, Transport: spec.RC}, good} {
		require.NoError(t, client.SendParams(p))
		ep, err := client.RecvEndpoint()
		if p.Size == 0 {
			var perr *oob.Error
			require.ErrorAs(t, err, &perr)
			assert.Equal(t, oob.CodeParams, perr.Code)
			require.ErrorIs(t, err, oob.ErrInvalidParams)
			assert.EqualError(t, err, "peer: oob: invalid params: size 0: must be 1..8388608 bytes")
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, serverEP, ep)
		require.NoError(t, client.SendEndpoint(clientEP))
		require.NoError(t, client.RecvBarrier(0))
		for seq := uint32(1); seq <= 2; seq++ {
			require.NoError(t, client.SendRun(seq, 32))
			require.NoError(t, client.RecvBarrier(seq))
			w := client.Watch(nil)
			time.Sleep(20 * time.Millisecond) // the loop
			require.NoError(t, w.Stop())
			require.NoError(t, client.SendDone(1000))
			n, err := client.RecvDone()
			require.NoError(t, err)
			assert.Equal(t, 1000+uint64(seq), n)
		}
	}
	require.NoError(t, client.Close())
	require.NoError(t, client.Close(), "Close is idempotent")
	require.NoError(t, <-serverDone)
}

// TestNext: the peer's wait for the next request returns any message, an
// *Error for the client's Error, io.EOF for a clean close, and a timeout
// error naming what it waited for.
func TestNext(t *testing.T) {
	client, server := pair(t, time.Second)
	require.NoError(t, client.SendRun(1, 2))
	m, err := server.Next(time.Second)
	require.NoError(t, err)
	assert.Equal(t, oob.Run{Seq: 1, Size: 2}, m)

	require.NoError(t, client.SendError(oob.CodeResource, "ibv_reg_mr: Cannot allocate memory"))
	_, err = server.Next(time.Second)
	var perr *oob.Error
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, oob.CodeResource, perr.Code)

	_, err = server.Next(50 * time.Millisecond)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.Contains(t, err.Error(), "oob: no request (Params or Run) from peer ")

	require.NoError(t, client.Close())
	_, err = server.Next(time.Second)
	assert.Equal(t, io.EOF, err)
}

func TestRecvBarrierOutOfStep(t *testing.T) {
	client, server := pair(t, time.Second)
	require.NoError(t, server.Send(oob.Barrier{Seq: 4}))
	err := client.RecvBarrier(3)
	require.ErrorIs(t, err, oob.ErrProtocol)
	assert.EqualError(t, err, fmt.Sprintf("oob: protocol error: barrier out of step: expected 3, peer %s sent 4", client.NetConn().RemoteAddr()))
}

// TestPipe runs a handshake and a barrier over net.Pipe, which has no
// buffer: Barrier must send and receive at once.
func TestPipe(t *testing.T) {
	a, b := net.Pipe()
	ca, cb := oob.NewConn(a), oob.NewConn(b)
	defer ca.Close()
	defer cb.Close()
	ca.Timeout, cb.Timeout = time.Second, time.Second
	errc := make(chan error, 1)
	go func() {
		_, err := cb.AcceptHandshake()
		if err == nil {
			err = cb.Barrier(9)
		}
		errc <- err
	}()
	_, err := ca.Handshake()
	require.NoError(t, err)
	require.NoError(t, ca.Barrier(9))
	require.NoError(t, <-errc)
}

func TestRecvTimeout(t *testing.T) {
	client, server := pair(t, 200*time.Millisecond)
	start := time.Now()
	_, err := client.RecvEndpoint()
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.EqualError(t, err, fmt.Sprintf("oob: no Endpoint from peer %s within 200ms: read tcp %s->%s: i/o timeout",
		client.NetConn().RemoteAddr(), client.NetConn().LocalAddr(), client.NetConn().RemoteAddr()))
	assert.Less(t, time.Since(start), 2*time.Second)

	// A receive that timed out leaves the Conn usable.
	require.NoError(t, server.SendEndpoint(serverEP))
	ep, err := client.RecvEndpoint()
	require.NoError(t, err)
	assert.Equal(t, serverEP, ep)
}

func TestUnexpectedMessage(t *testing.T) {
	client, server := pair(t, time.Second)
	require.NoError(t, server.SendDone(5))
	_, err := client.RecvEndpoint()
	require.ErrorIs(t, err, oob.ErrProtocol)
	assert.EqualError(t, err, fmt.Sprintf("oob: protocol error: expected Endpoint from peer %s, got Done", client.NetConn().RemoteAddr()))
}

func TestPeerClosedWhileWaiting(t *testing.T) {
	client, server := pair(t, time.Second)
	server.Close()
	_, err := client.RecvDone()
	require.ErrorIs(t, err, io.EOF)
	assert.EqualError(t, err, fmt.Sprintf("oob: peer %s closed the connection while we waited for Done: EOF", client.NetConn().RemoteAddr()))
}

func TestBarrierOutOfStep(t *testing.T) {
	client, server := pair(t, time.Second)
	errc := make(chan error, 1)
	go func() { errc <- server.Barrier(2) }()
	err := client.Barrier(1)
	require.ErrorIs(t, err, oob.ErrProtocol)
	assert.EqualError(t, err, fmt.Sprintf("oob: protocol error: barrier out of step: sent 1, peer %s sent 2", client.NetConn().RemoteAddr()))
	require.ErrorIs(t, <-errc, oob.ErrProtocol)
}

func TestSendErrorTruncates(t *testing.T) {
	client, server := pair(t, time.Second)
	require.NoError(t, server.SendError(oob.CodeResource, strings.Repeat("é", oob.MaxString)+"\xff"))
	_, err := client.RecvDone()
	var perr *oob.Error
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, oob.CodeResource, perr.Code)
	assert.LessOrEqual(t, len(perr.Msg), oob.MaxString)
	assert.True(t, utf8.ValidString(perr.Msg))
	assert.True(t, strings.HasSuffix(perr.Msg, "é..."), perr.Msg[len(perr.Msg)-10:])
}

// TestSendErrorMessageCompletion: a completion's fields cross with the
// Error, its msg made valid as SendError makes it; the Watcher of a run
// reports it as an *Error with them.
func TestSendErrorMessageCompletion(t *testing.T) {
	client, server := pair(t, time.Second)
	w := client.Watch(func(error) {})
	sent := oob.Error{Code: oob.CodeCompletion, Msg: "rdmapeer (rxe1): \xff" + strings.Repeat("x", oob.MaxString), WCStatus: 2, VendorErr: 0x81, RecvQueue: true}
	require.NoError(t, server.SendErrorMessage(sent))
	select {
	case <-w.Failed():
	case <-time.After(5 * time.Second):
		t.Fatal("the Watcher saw no Error within 5 s")
	}
	var perr *oob.Error
	require.ErrorAs(t, w.Stop(), &perr)
	assert.Equal(t, oob.CodeCompletion, perr.Code)
	assert.Equal(t, uint32(2), perr.WCStatus)
	assert.Equal(t, uint32(0x81), perr.VendorErr)
	assert.True(t, perr.RecvQueue)
	assert.True(t, strings.HasPrefix(perr.Msg, "rdmapeer (rxe1): \uFFFDx"), perr.Msg[:24])
	assert.LessOrEqual(t, len(perr.Msg), oob.MaxString)

	// Completion fields with any other code are refused, not sent.
	assert.ErrorContains(t, server.SendErrorMessage(oob.Error{Code: oob.CodeInternal, VendorErr: 1}), "only code 9")
}

func TestSendErrCodes(t *testing.T) {
	client, server := pair(t, time.Second)
	for _, tc := range []struct {
		err  error
		code oob.Code
	}{
		{fmt.Errorf("x: %w", oob.ErrInvalidParams), oob.CodeParams},
		{oob.ErrVersion, oob.CodeVersion},
		{oob.ErrMalformed, oob.CodeProtocol},
		{os.ErrDeadlineExceeded, oob.CodeTimeout},
		{errors.New("ibv_create_qp: Invalid argument"), oob.CodeInternal},
	} {
		require.NoError(t, server.SendErr(tc.err))
		_, err := client.Recv()
		var perr *oob.Error
		require.ErrorAs(t, err, &perr)
		assert.Equal(t, tc.code, perr.Code)
		assert.Equal(t, tc.err.Error(), perr.Msg)
	}
}

func TestCloseUnblocksRecv(t *testing.T) {
	client, _ := pair(t, 5*time.Second)
	errc := make(chan error, 1)
	go func() { _, err := client.RecvDone(); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, client.Close())
	select {
	case err := <-errc:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(time.Second):
		t.Fatal("Close did not unblock a receive")
	}
}
