//go:build ignore

// reproduce.go: the rdmapeer findings of docs/security.md on 127.0.0.1
// (go run docs/security/reproduce.go, on this branch or an older one): runs the peer package in
// process with a device that does not exist (a served session fails on
// the device: "rdmapeer (nodev0): ..."; a refused one says why).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/internal/spec"
)

var params = oob.Params{Op: spec.Write, Transport: spec.RC, Size: 4096, Inline: -1, GIDIndex: -1}

func start(cfg peer.Config, logs *atomic.Int64) (*peer.Server, string) {
	cfg.Session.Device = "nodev0"
	cfg.Session.GIDIndex = -1 // as rdmapeer -gid-index gives it
	cfg.Logf = func(f string, a ...any) {
		logs.Add(1)
		if os.Getenv("SHOWLOG") != "" {
			fmt.Printf("    log: %s\n", fmt.Sprintf(f, a...))
		}
	}
	srv := peer.New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	return srv, ln.Addr().String()
}

func ask(addr string, p oob.Params) string {
	c, err := oob.Dial(context.Background(), addr, 2*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	if err := c.SendParams(p); err != nil {
		return "send: " + err.Error()
	}
	_, err = c.RecvEndpoint()
	return fmt.Sprint(err)
}

func main() {
	var logs atomic.Int64
	fmt.Println("== 1a: 4 connections that only say Hello, -max-sessions 4, then a real client")
	srv, addr := start(peer.Config{MaxSessions: 4}, &logs)
	var hold []*oob.Conn
	for range 4 {
		c, err := oob.Dial(context.Background(), addr, 2*time.Second)
		if err != nil {
			fmt.Println("  hello-only dial:", err)
			continue
		}
		hold = append(hold, c)
	}
	time.Sleep(100 * time.Millisecond)
	fmt.Printf("  slots taken by the 4: %d\n", srv.Stats().Active)
	fmt.Printf("  real client at once: %s\n", ask(addr, params))
	time.Sleep(2500 * time.Millisecond)
	fmt.Printf("  after 2.5 s: slots taken %d; real client: %s\n", srv.Stats().Active, ask(addr, params))
	for _, c := range hold {
		c.Close()
	}
	srv.Shutdown()

	fmt.Println("== 1b: 90 silent connections from 127.0.0.2 reopened every 1.5 s, 6 real handshakes from 127.0.0.1, 8 s")
	logs.Store(0)
	srv, addr = start(peer.Config{}, &logs)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			var cs []net.Conn
			for range 90 {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
				if c, err := d.Dial("tcp", addr); err == nil {
					cs = append(cs, c)
				}
			}
			select {
			case <-stop:
				for _, c := range cs {
					c.Close()
				}
				return
			case <-time.After(1500 * time.Millisecond):
			}
			for _, c := range cs {
				c.Close()
			}
		}
	})
	time.Sleep(300 * time.Millisecond)
	broken := 0
	for i := range 6 {
		r := ask(addr, params)
		if !strings.Contains(r, "rdmapeer (nodev0)") {
			broken++
			fmt.Printf("  real handshake %d broken: %s\n", i+1, r)
		}
		time.Sleep(1200 * time.Millisecond)
	}
	time.Sleep(800 * time.Millisecond)
	close(stop)
	wg.Wait()
	srv.Shutdown()
	fmt.Printf("  real handshakes broken: %d of 6; log lines in 8 s: %d\n", broken, logs.Load())

	fmt.Println("== 1c: a client asks for GID index 3 where the operator gave -gid-index -1")
	srv, addr = start(peer.Config{}, &logs)
	p := params
	p.GIDIndex = 3
	fmt.Printf("  answer: %s\n", ask(addr, p))
	fmt.Println("== 1d: a client asks for a 10-minute RDMA loop timeout (the default limits)")
	p = params
	p.IdleTimeout = 10 * time.Minute
	fmt.Printf("  answer: %s\n", ask(addr, p))
	srv.Shutdown()
}
