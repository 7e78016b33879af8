package control

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// AuthTimeout bounds a control connection's hello and auth, so that a
// silent stranger holds dst's accept loop for no longer.
const AuthTimeout = 5 * time.Second

// An Authed is src's control connection, past its auth.
type Authed struct {
	Conn     net.Conn
	R        *bufio.Reader
	SrcNonce string
}

// Accept accepts control connections until ln closes and hands the
// first that comes from src's address and answers hello with this job's
// token, round and pair to authed; every other is refused, logged and
// closed, and the wait goes on.
// logf says why each stranger was refused.
func (s Session) Accept(ln net.Listener, srcIPs []netip.Addr, dstNonce string, logf func(format string, args ...any), authed chan<- Authed) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	shaking := map[net.Conn]bool{} // in their hello and auth
	defer func() {
		mu.Lock()
		for conn := range shaking {
			conn.Close() // the pair is over: no need to wait out their deadline
		}
		mu.Unlock()
		wg.Wait()
	}()
	var once sync.Once
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		ip := remoteIP(conn)
		if !slices.Contains(srcIPs, ip) {
			logf("%s %s: refused a control connection from %s: not %s's address", s.Step.Src, s.Step.Dst, conn.RemoteAddr(), s.Step.Src)
			conn.Close()
			continue
		}
		mu.Lock()
		shaking[conn] = true
		mu.Unlock()
		wg.Go(func() {
			conn.SetDeadline(time.Now().Add(AuthTimeout))
			r := NewReader(conn)
			srcNonce, err := s.DstHello(conn, r, dstNonce)
			mu.Lock()
			delete(shaking, conn)
			mu.Unlock()
			if err != nil {
				logf("%s %s: refused a control connection from %s: %v", s.Step.Src, s.Step.Dst, conn.RemoteAddr(), err)
				conn.Close()
				return
			}
			taken := false
			once.Do(func() {
				taken = true
				authed <- Authed{Conn: conn, R: r, SrcNonce: srcNonce}
			})
			if !taken {
				logf("%s %s: refused a second control connection from %s", s.Step.Src, s.Step.Dst, conn.RemoteAddr())
				conn.Close()
			}
		})
	}
}

// LookupIPs resolves a node's address (an IP or a name).
func LookupIPs(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for i := range ips {
		ips[i] = ips[i].Unmap()
	}
	return ips, nil
}

func remoteIP(conn net.Conn) netip.Addr {
	ap, err := netip.ParseAddrPort(conn.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
