package oob_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// TestVersionMismatch: both sides name both versions and which side to
// upgrade: the older one. 2 is the version before the challenge, 3 the
// one whose answer bound only the nonce (a relayed answer was taken).
func TestVersionMismatch(t *testing.T) {
	for _, tc := range []struct {
		client, server     uint16
		clientErr, peerErr string
	}{
		{2, 3, "oob: peer speaks oob version 3, this client 2: upgrade this client (rdmabench) to the peer's rdmapeer version",
			"oob: client speaks oob version 2, this rdmapeer 3: upgrade the client (rdmabench) to this rdmapeer's version"},
		{3, 2, "oob: peer speaks oob version 2, this client 3: upgrade rdmapeer on the peer's node to this client's rdmabench version",
			"oob: client speaks oob version 3, this rdmapeer 2: upgrade this rdmapeer to the client's rdmabench version"},
		{4, 5, "oob: peer speaks oob version 5, this client 4: upgrade this client (rdmabench) to the peer's rdmapeer version",
			"oob: client speaks oob version 4, this rdmapeer 5: upgrade the client (rdmabench) to this rdmapeer's version"},
		// Version 6 (Params.device, rails): an rdmapeer of version 5
		// serves one device and must be upgraded for a client of 6, and
		// the other way round.
		{oob.Version, 5, "oob: peer speaks oob version 5, this client 6: upgrade rdmapeer on the peer's node to this client's rdmabench version",
			"oob: client speaks oob version 6, this rdmapeer 5: upgrade this rdmapeer to the client's rdmabench version"},
		{5, oob.Version, "oob: peer speaks oob version 6, this client 5: upgrade this client (rdmabench) to the peer's rdmapeer version",
			"oob: client speaks oob version 5, this rdmapeer 6: upgrade the client (rdmabench) to this rdmapeer's version"},
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
	assert.Contains(t, err.Error(), "peer speaks oob version 2, this client 6: upgrade rdmapeer on the peer's node")
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
	assert.Equal(t, oob.Error{Code: oob.CodeProtocol, Msg: "this is rdmapeer (oob version 6): it speaks only the rdmabench out-of-band protocol"}, m)
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
