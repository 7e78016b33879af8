package perftestcmp

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/rdmabench/rdmabench/internal/cmdout"
)

// A peerProc is our side's responder run as a process of its own
// (rdmapeer on this node, reached as a two-node peer at 127.0.0.1), as
// perftest's server is. Without it our loopback initiator and responder
// are two threads of one process: one address space, so the Go runtime's
// memory work (and the kernel's TLB shootdowns it causes) reaches both
// polling CPUs, where perftest's two single-threaded processes see none of
// the other's. -peer measures what that costs.
type peerProc struct {
	cmd  *exec.Cmd
	addr string
	out  bytes.Buffer
	done chan error
}

// startPeer starts rdmapeer (c.PeerBin) pinned to the responder's CPU on
// the first free port from c.Port, and waits until it listens.
func startPeer(ctx context.Context, c *Config) (*peerProc, error) {
	port := freePort(c.Port)
	p := &peerProc{addr: "127.0.0.1:" + strconv.Itoa(port), done: make(chan error, 1)}
	p.cmd = exec.Command(c.PeerBin, "-listen", p.addr, "-cpu", strconv.Itoa(c.CPUs[1]),
		"-device", c.Device, "-gid-index", strconv.Itoa(c.GIDIndex), "-allow", "127.0.0.1", "-idle", "none")
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("-peer %s: %w", c.PeerBin, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := waitListen(wctx, port, p.done); err != nil {
		p.stop()
		return nil, fmt.Errorf("-peer %s: %w%s", c.PeerBin, err, cmdout.Tail(p.out.Bytes(), tailLines))
	}
	return p, nil
}

// stop ends the peer and returns its output.
func (p *peerProc) stop() []byte {
	p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	return p.out.Bytes()
}
