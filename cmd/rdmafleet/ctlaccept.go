package main

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// A ctlConn is src's control connection, past its auth.
type ctlConn struct {
	conn     net.Conn
	r        *bufio.Reader
	srcNonce string
}

// acceptSrc accepts control connections until ln closes and hands the
// first that comes from src's address and answers hello with this job's
// token, round and pair to authed; every other is refused, logged and
// closed, and the wait goes on.
func (a *agent) acceptSrc(ln net.Listener, c ctl, srcIPs []netip.Addr, dstNonce string, authed chan<- ctlConn) {
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
			a.logf("%s %s: refused a control connection from %s: not %s's address", a.step.Src, a.step.Dst, conn.RemoteAddr(), a.step.Src)
			conn.Close()
			continue
		}
		mu.Lock()
		shaking[conn] = true
		mu.Unlock()
		wg.Go(func() {
			conn.SetDeadline(time.Now().Add(ctlAuthTimeout))
			r := newCtlReader(conn)
			srcNonce, err := c.dstHello(conn, r, dstNonce)
			mu.Lock()
			delete(shaking, conn)
			mu.Unlock()
			if err != nil {
				a.logf("%s %s: refused a control connection from %s: %v", a.step.Src, a.step.Dst, conn.RemoteAddr(), err)
				conn.Close()
				return
			}
			taken := false
			once.Do(func() {
				taken = true
				authed <- ctlConn{conn: conn, r: r, srcNonce: srcNonce}
			})
			if !taken {
				a.logf("%s %s: refused a second control connection from %s", a.step.Src, a.step.Dst, conn.RemoteAddr())
				conn.Close()
			}
		})
	}
}

// lookupIPs resolves a node's address (an IP or a name).
func lookupIPs(ctx context.Context, host string) ([]netip.Addr, error) {
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
