package oob_test

import (
	"bytes"
	"encoding/hex"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// recorder keeps every byte written through a net.Conn.
type recorder struct {
	net.Conn
	mu  sync.Mutex
	out bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.out.Write(p)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.out.Bytes()...)
}

// tokenPair runs a server requiring serverToken and a client holding
// clientToken; it returns both handshake errors and the bytes the client
// and the server wrote.
func tokenPair(t *testing.T, serverToken, clientToken string) (clientErr, serverErr error, clientSent, serverSent []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	srv := make(chan error, 1)
	var srec *recorder
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			srv <- err
			return
		}
		srec = &recorder{Conn: nc}
		c, err := oob.AcceptToken(srec, time.Second, serverToken)
		if err == nil {
			c.Close()
		}
		srv <- err
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	crec := &recorder{Conn: nc}
	c := oob.NewConn(crec)
	c.Timeout, c.Token = time.Second, clientToken
	_, clientErr = c.Handshake()
	if clientErr == nil {
		_, clientErr = c.Recv() // the server's Error, if it refused, or EOF
		if clientErr != nil && !assert.Error(t, clientErr) {
			clientErr = nil
		}
	}
	c.Close()
	serverErr = <-srv
	return clientErr, serverErr, crec.bytes(), srec.bytes()
}

// TestToken: a peer with a token serves only a client that answers its
// challenge with the same token; the token never crosses the wire, nor
// does anything that stays the same from one connection to the next.
func TestToken(t *testing.T) {
	const token = "s3cret-token-of-the-fleet"
	t.Run("right", func(t *testing.T) {
		cerr, serr, sent, _ := tokenPair(t, token, token)
		assert.NoError(t, serr)
		assert.Error(t, cerr, "EOF after the handshake: the server closed")
		assert.NotErrorIs(t, cerr, oob.ErrAuth)
		assert.NotContains(t, string(sent), token)
		assert.NotContains(t, hex.EncodeToString(sent), hex.EncodeToString([]byte(token)))
	})
	t.Run("wrong", func(t *testing.T) {
		cerr, serr, sent, _ := tokenPair(t, token, "guess")
		require.ErrorIs(t, serr, oob.ErrAuth)
		assert.Contains(t, serr.Error(), "wrong token from client 127.0.0.1:")
		require.ErrorIs(t, cerr, oob.ErrAuth)
		assert.Contains(t, cerr.Error(), "set RDMABENCH_PEER_TOKEN to the value of its -token")
		assert.NotContains(t, string(sent), "guess")
	})
	t.Run("none", func(t *testing.T) {
		cerr, serr, _, _ := tokenPair(t, token, "")
		require.ErrorIs(t, cerr, oob.ErrAuth)
		assert.Contains(t, cerr.Error(), "requires a token: set RDMABENCH_PEER_TOKEN")
		assert.Error(t, serr, "the client hung up without an answer")
	})
	t.Run("not required", func(t *testing.T) {
		_, serr, _, _ := tokenPair(t, "", "")
		assert.NoError(t, serr)
		_, serr, _, _ = tokenPair(t, "", token) // a token where none is needed is harmless
		assert.NoError(t, serr)
	})
	t.Run("fresh nonce", func(t *testing.T) {
		// Two connections: the server's challenges differ, so a recorded
		// answer cannot be replayed.
		_, _, sent1, srv1 := tokenPair(t, token, token)
		_, _, sent2, srv2 := tokenPair(t, token, token)
		assert.NotEqual(t, srv1, srv2)
		assert.NotEqual(t, sent1, sent2)
	})
}

// TestAuthMAC pins the MAC: HMAC-SHA256 keyed with the token over the
// label, the nonce and the address the client reached (the value computed
// independently with Python's hmac module: hmac.new(b'k',
// b'rdmabench oob auth v4\x00'+bytes(32)+b'127.0.0.1:18515', hashlib.sha256)).
func TestAuthMAC(t *testing.T) {
	var nonce [oob.NonceSize]byte
	mac := oob.AuthMAC("k", nonce, "127.0.0.1:18515")
	assert.Equal(t, "9ab228f2e70bc2aaecd97469443fa458b4b605b462f51434fa842970e73d7e56", hex.EncodeToString(mac[:]))
	assert.NotEqual(t, mac, oob.AuthMAC("k", nonce, "127.0.0.1:18516"))
	nonce[0] = 1
	assert.NotEqual(t, mac, oob.AuthMAC("k", nonce, "127.0.0.1:18515"))
}

// TestTokenRelay: a fake peer that a client with the token connects to
// cannot use the client's answer to open a session on the real peer. It
// forwards the real peer's challenge; the client's answer names the fake's
// address, which the real peer refuses. Told that no token is needed, the
// client sends no MAC at all.
func TestTokenRelay(t *testing.T) {
	const token = "s3cret-token-of-the-fleet"
	real, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer real.Close()
	realErr := make(chan error, 1)
	go func() {
		nc, err := real.Accept()
		if err != nil {
			realErr <- err
			return
		}
		c, err := oob.AcceptToken(nc, 2*time.Second, token)
		if err == nil {
			c.Close()
		}
		realErr <- err
	}()

	fake, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer fake.Close()
	relayed := make(chan oob.Auth, 2)
	go func() {
		vnc, err := fake.Accept()
		if err != nil {
			return
		}
		victim := oob.NewConn(vnc)
		defer victim.Close()
		victim.Timeout = 2 * time.Second
		rnc, err := net.Dial("tcp", real.Addr().String())
		if err != nil {
			return
		}
		target := oob.NewConn(rnc)
		defer target.Close()
		target.Timeout = 2 * time.Second
		h, err := victim.RecvHello()
		if err != nil || target.SendHello(h) != nil {
			return
		}
		ph, err := target.RecvHello()
		if err != nil || victim.SendHello(ph) != nil {
			return
		}
		ch, err := target.Recv()
		if err != nil || victim.Send(ch) != nil {
			return
		}
		a, err := victim.Recv()
		if err != nil {
			return
		}
		relayed <- a.(oob.Auth)
		_ = target.Send(a)
		_, _ = target.Recv() // the real peer's verdict
	}()

	c := oob.NewConn(mustDial(t, fake.Addr().String()))
	c.Timeout, c.Token = 2*time.Second, token
	_, _ = c.Handshake()
	c.Close()
	a := <-relayed
	assert.Equal(t, fake.Addr().String(), a.Addr, "the answer names the address the client reached")
	err = <-realErr
	require.ErrorIs(t, err, oob.ErrAuth, "the relayed answer opened a session on the real peer")
	assert.Contains(t, err.Error(), "relayed, or through address translation")

	t.Run("no token asked", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		got := make(chan oob.Auth, 1)
		go func() {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s := oob.NewConn(nc)
			defer s.Close()
			s.Timeout = 2 * time.Second
			if _, err := s.RecvHello(); err != nil || s.SendHello(oob.Hello{Version: oob.Version, Software: "fake"}) != nil {
				return
			}
			if s.Send(oob.Challenge{Nonce: [oob.NonceSize]byte{1, 2, 3}}) != nil {
				return
			}
			if m, err := s.Recv(); err == nil {
				got <- m.(oob.Auth)
			}
			close(got)
		}()
		c := oob.NewConn(mustDial(t, ln.Addr().String()))
		defer c.Close()
		c.Timeout, c.Token = 2*time.Second, token
		_, err = c.Handshake()
		require.NoError(t, err)
		a, ok := <-got
		require.True(t, ok)
		assert.Zero(t, a.MAC, "no MAC for a peer that asks for none")
	})
}

func mustDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	return nc
}
