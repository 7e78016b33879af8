package oob_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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

// TestWatchEndedOnMessage: a message that is not an Error ends a Watch
// without a failure, closes Ended, and is returned by the next receive.
func TestWatchEndedOnMessage(t *testing.T) {
	client, server := pair(t, time.Second)
	w := server.Watch(func(err error) { t.Errorf("onFail called: %v", err) })
	select {
	case <-w.Ended():
		t.Fatal("Ended before any message")
	case <-time.After(20 * time.Millisecond):
	}
	require.NoError(t, client.SendDone(42))
	select {
	case <-w.Ended():
	case <-time.After(2 * time.Second):
		t.Fatal("Ended not closed by the client's Done")
	}
	require.NoError(t, w.Err())
	require.NoError(t, w.Stop())
	n, err := server.RecvDone()
	require.NoError(t, err)
	assert.Equal(t, uint64(42), n)
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

// TestVersionMismatch: both sides name both versions and which side to
// upgrade: the older one. 2 is the version before the challenge, the
// last rdmapeer that speaks it.
func TestVersionMismatch(t *testing.T) {
	for _, tc := range []struct {
		client, server     uint16
		clientErr, peerErr string
	}{
		{2, 3, "oob: peer speaks oob version 3, this client 2: upgrade this client (rdmabench) to the peer's rdmapeer version",
			"oob: client speaks oob version 2, this rdmapeer 3: upgrade the client (rdmabench) to this rdmapeer's version"},
		{3, 2, "oob: peer speaks oob version 2, this client 3: upgrade rdmapeer on the peer's node to this client's rdmabench version",
			"oob: client speaks oob version 3, this rdmapeer 2: upgrade this rdmapeer to the client's rdmabench version"},
	} {
		t.Run(fmt.Sprintf("client%d-server%d", tc.client, tc.server), func(t *testing.T) {
			serverErr := make(chan error, 1)
			addr := listen(t, func(_ context.Context, nc net.Conn) {
				s := oob.NewConn(nc)
				s.Timeout = time.Second
				s.Local = oob.Hello{Version: tc.server, Software: "peer"}
				_, err := s.AcceptHandshake()
				serverErr <- err
			})
			nc, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			c := oob.NewConn(nc)
			defer c.Close()
			c.Timeout = time.Second
			c.Local = oob.Hello{Version: tc.client, Software: "client"}
			peer, err := c.Handshake()
			require.ErrorIs(t, err, oob.ErrVersion)
			assert.EqualError(t, err, tc.clientErr)
			assert.Equal(t, oob.Hello{Version: tc.server, Software: "peer"}, peer)

			err = <-serverErr
			require.ErrorIs(t, err, oob.ErrVersion)
			assert.EqualError(t, err, tc.peerErr)
		})
	}
}

// TestVersion2Peer: this client against a real version-2 rdmapeer (its
// Hello, then its version check, as that release did): the client's error
// says to upgrade rdmapeer, before any challenge is awaited.
func TestVersion2Peer(t *testing.T) {
	addr := listen(t, func(_ context.Context, nc net.Conn) {
		s := oob.NewConn(nc)
		s.Timeout = time.Second
		if _, err := s.RecvHello(); err == nil {
			_ = s.SendHello(oob.Hello{Version: 2, Software: "rdmabench v0.2.0"})
		}
		_, _ = io.Copy(io.Discard, nc)
	})
	start := time.Now()
	_, err := oob.Dial(t.Context(), addr, 2*time.Second)
	require.ErrorIs(t, err, oob.ErrVersion)
	assert.Contains(t, err.Error(), "peer speaks oob version 2, this client 3: upgrade rdmapeer on the peer's node")
	assert.Less(t, time.Since(start), time.Second, "no wait for a challenge the old peer never sends")
}

// TestNotPeer dials things that are not rdmapeer: every one must fail with
// ErrNotPeer within the timeout.
func TestNotPeer(t *testing.T) {
	const timeout = 200 * time.Millisecond
	silent, err := net.Listen("tcp", "127.0.0.1:0") // the kernel accepts; nobody answers
	require.NoError(t, err)
	defer silent.Close()
	httpSrv := httptest.NewServer(http.NotFoundHandler())
	defer httpSrv.Close()

	for _, tc := range []struct {
		name string
		addr string
		got  string // what the error says came instead
	}{
		{"silent", silent.Addr().String(), "no answer within 200ms"},
		{"net/http", strings.TrimPrefix(httpSrv.URL, "http://"), ""},
		{"HTTP answer", listen(t, func(ctx context.Context, nc net.Conn) {
			nc.Read(make([]byte, 512))
			io.WriteString(nc, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
		}), `"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"`},
		{"speaks first", listen(t, func(ctx context.Context, nc net.Conn) {
			io.WriteString(nc, "SSH-2.0-OpenSSH_9.2p1\r\n")
			<-ctx.Done()
		}), `"SSH-2.0-OpenSSH_9.2p1\r\n"`},
		{"garbage", listen(t, func(ctx context.Context, nc net.Conn) {
			nc.Write(append([]byte{0x01, 0x00, 0x00, 0x0b}, "NOTRDMA...."...))
			<-ctx.Done()
		}), `"\x01\x00\x00\vNOTRDMA...."`},
		{"closes", listen(t, func(ctx context.Context, nc net.Conn) {
			nc.Read(make([]byte, 512))
		}), "the connection closed with no answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c, err := oob.Dial(t.Context(), tc.addr, timeout)
			elapsed := time.Since(start)
			assert.Nil(t, c)
			require.ErrorIs(t, err, oob.ErrNotPeer)
			var npe *oob.NotPeerError
			require.ErrorAs(t, err, &npe)
			assert.Equal(t, tc.addr, npe.Addr)
			if tc.got != "" {
				assert.EqualError(t, err, fmt.Sprintf("%s is not an rdmapeer (got %s)", tc.addr, tc.got))
			}
			assert.Less(t, elapsed, 2*time.Second)
			t.Logf("%v after %v", err, elapsed.Round(time.Millisecond))
		})
	}
}

func TestSilentPeerTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	start := time.Now()
	_, err = oob.Dial(t.Context(), ln.Addr().String(), 200*time.Millisecond)
	elapsed := time.Since(start)
	require.ErrorIs(t, err, oob.ErrNotPeer)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.GreaterOrEqual(t, elapsed, 200*time.Millisecond)
	assert.Less(t, elapsed, 2*time.Second)
}

func TestPeerClosesMidMessage(t *testing.T) {
	frame, err := oob.Marshal(oob.Hello{Version: oob.Version, Software: "x"}) // 18 bytes
	require.NoError(t, err)
	addr := listen(t, func(ctx context.Context, nc net.Conn) {
		nc.Read(make([]byte, 512))
		nc.Write(frame[:10])
	})
	_, err = oob.Dial(t.Context(), addr, time.Second)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.NotErrorIs(t, err, oob.ErrNotPeer)
	assert.EqualError(t, err, fmt.Sprintf("oob: peer %s closed the connection in the middle of a Hello message (got 10 of 18 bytes): unexpected EOF", addr))
}

// TestAcceptNotClient: a client that does not speak the protocol gets an
// Error back, and the server a *NotPeerError.
func TestAcceptNotClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	serverErr := make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			_, err = oob.Accept(nc, time.Second)
		}
		serverErr <- err
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer nc.Close()
	_, err = io.WriteString(nc, "GET / HTTP/1.1\r\nHost: nodeB\r\n\r\n")
	require.NoError(t, err)

	err = <-serverErr
	require.ErrorIs(t, err, oob.ErrNotPeer)
	assert.EqualError(t, err, fmt.Sprintf(`%s is not an rdmabench client (got "GET / HTTP/1.1\r\nHost: nodeB\r\n\r\n")`, nc.LocalAddr()))

	reply, err := io.ReadAll(nc)
	require.NoError(t, err)
	m, err := oob.Decode(reply)
	require.NoError(t, err)
	assert.Equal(t, oob.Error{Code: oob.CodeProtocol, Msg: "this is rdmapeer (oob version 3): it speaks only the rdmabench out-of-band protocol"}, m)
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

func TestWatchPeerClosed(t *testing.T) {
	client, server := pair(t, time.Second)
	called := make(chan error, 1)
	w := client.Watch(func(err error) { called <- err })
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, w.Err())
	start := time.Now()
	require.NoError(t, server.Close())
	select {
	case <-w.Failed():
	case <-time.After(2 * time.Second):
		t.Fatal("Watch did not report the closed peer within 2 s")
	}
	elapsed := time.Since(start)
	assert.Less(t, elapsed, 100*time.Millisecond)
	err := w.Err()
	require.ErrorIs(t, err, oob.ErrPeerLost)
	require.ErrorIs(t, err, io.EOF)
	assert.EqualError(t, err, fmt.Sprintf("oob: lost the peer: peer %s closed the connection during the run (its process exited or was killed): EOF", client.NetConn().RemoteAddr()))
	assert.Equal(t, err, <-called)
	assert.Equal(t, err, w.Stop())
	t.Logf("reported after %v", elapsed)
}

// TestWatchKilledPeer SIGKILLs a peer process during a Watch.
func TestWatchKilledPeer(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	addr, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)

	c, err := oob.Dial(t.Context(), strings.TrimSpace(addr), 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Barrier(1))
	w := c.Watch(nil)
	time.Sleep(10 * time.Millisecond)
	start := time.Now()
	require.NoError(t, cmd.Process.Kill())
	select {
	case <-w.Failed():
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not report the killed peer within 5 s")
	}
	elapsed := time.Since(start)
	// At once, not after a timeout: the kernel closes the dead process's
	// socket and the Watch reads EOF (a few ms on a quiet host; the bound
	// is loose because a loaded CI host delays the kill itself).
	assert.Less(t, elapsed, 2*time.Second, "well under the 5 s exchange timeout")
	require.ErrorIs(t, w.Stop(), oob.ErrPeerLost)
	var exit *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &exit)
	t.Logf("killed peer reported after %v: %v", elapsed, w.Err())
}

func TestWatchPeerError(t *testing.T) {
	client, server := pair(t, time.Second)
	w := client.Watch(nil)
	require.NoError(t, server.SendError(oob.CodeTimeout, "rdma loop stalled for 10s"))
	select {
	case <-w.Failed():
	case <-time.After(2 * time.Second):
		t.Fatal("Watch did not report the peer's Error")
	}
	err := w.Stop()
	var perr *oob.Error
	require.ErrorAs(t, err, &perr)
	assert.EqualError(t, err, "peer: rdma loop stalled for 10s")
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

// TestWatchStopMidFrame: Stop interrupts a frame half read; the next
// receive finishes it.
func TestWatchStopMidFrame(t *testing.T) {
	client, server := pair(t, time.Second)
	frame, err := oob.Marshal(oob.Barrier{Seq: 5})
	require.NoError(t, err)
	w := client.Watch(nil)
	_, err = server.NetConn().Write(frame[:3])
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)

	_, err = client.Recv()
	require.ErrorIs(t, err, oob.ErrProtocol, "receive during a Watch")

	require.NoError(t, w.Stop())
	require.NoError(t, w.Stop(), "Stop is idempotent")
	_, err = server.NetConn().Write(frame[3:])
	require.NoError(t, err)
	m, err := client.Recv()
	require.NoError(t, err)
	assert.Equal(t, oob.Barrier{Seq: 5}, m)

	// A second watch on the same Conn, stopped with nothing read.
	w = client.Watch(nil)
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, w.Stop())
	require.NoError(t, server.SendDone(3))
	n, err := client.RecvDone()
	require.NoError(t, err)
	assert.Equal(t, uint64(3), n)
}

func TestWatchClose(t *testing.T) {
	client, _ := pair(t, time.Second)
	called := false
	w := client.Watch(func(error) { called = true })
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, client.Close())
	require.NoError(t, w.Stop(), "closing our own side is not a failure")
	assert.False(t, called)
}

func TestDialErrors(t *testing.T) {
	_, err := oob.Dial(t.Context(), "nodeB:", time.Second)
	require.ErrorIs(t, err, oob.ErrAddr)

	// Port 1, where nothing listens: a just-closed ephemeral port can be
	// handed to a parallel test's listener.
	addr := "127.0.0.1:1"
	_, err = oob.Dial(t.Context(), addr, time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach rdmapeer at "+addr+" (is it running there?): connect: connection refused")

	// Cancelling the context ends a handshake with a silent listener.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = oob.Dial(ctx, silent.Addr().String(), 5*time.Second)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second)
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
