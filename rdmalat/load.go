package rdmalat

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// loadDepth is how many RDMA WRITEs the load stream keeps in flight, as a
// bandwidth test does (ib_write_bw's default tx depth is 128; a few
// suffice to keep a device busy while a latency is measured).
const loadDepth = 16

// sendDepth is the endpoint's send queue depth: perftest's 1 of latency
// tests, or the load stream's.
func (e *Endpoint) sendDepth() int { return max(e.cfg.depth, sendQueueDepth) }

// loadStream is a bandwidth stream on the pair's device, from a queue pair
// of its own to another, while the pair measures latency (SuperBench's
// congestors on the same port): signaled RDMA WRITEs of size bytes,
// loadDepth in flight, from a goroutine on its own OS thread, pinned to a
// CPU the measuring threads do not use when there is one. In loopback
// mode the target is a second endpoint of this process (dst); in
// two-node mode it is a load session of the pair's rdmapeer (peer).
type loadStream struct {
	src, dst *Endpoint
	peer     *loadPeer // two-node mode's target; nil in loopback
	remote   PeerInfo  // the target's queue pair and buffer
	size     int
	bytes    atomic.Uint64 // written so far
	stop     atomic.Bool
	done     chan error
	running  bool // run has been started: close waits for it
	closed   bool
}

// maxLoadSize is the largest stream message: perftest -a's largest size,
// the bound env puts on RDMABENCH_LOAD.
const maxLoadSize = 8 << 20

// loadAckTimeout is the stream's ACK timeout exponent: 4.096 us * 2^20.
const loadAckTimeout = 20

// StartLoad starts a load stream of size-byte RDMA WRITEs from a queue
// pair of its own on the initiator's device, running until StopLoad or
// Close, to a queue pair of its own on the responder's device: in this
// process in loopback mode, a load session of the pair's rdmapeer in
// two-node mode (a second connection, which takes a session slot there
// but no answering CPU). Measure then reports its throughput over each
// measured run beside the latency, as load-MB/s.
func (p *Pair) StartLoad(size int) (err error) {
	if p.load != nil {
		return errors.New("rdmalat: the pair has a load stream already")
	}
	if size < 1 || size > maxLoadSize {
		return fmt.Errorf("rdmalat: %s: size %d: want 1 byte to %d", env.VarLoad, size, maxLoadSize)
	}
	if p.Mode == "two-node" && p.peer == nil {
		return fmt.Errorf("rdmalat: %s: this two-node pair was not made by DialPeer, which the stream needs to reach rdmapeer", env.VarLoad)
	}
	cfg := p.Local.cfg
	cfg.Op, cfg.Transport, cfg.Events, cfg.CM = spec.Write, spec.RC, false, false
	cfg.MaxSize, cfg.Inline, cfg.depth = size, 0, loadDepth
	// An ACK timeout of 4.3 s, not 67 ms: a stream that fills a shared
	// receive backlog under emulation waited over 67 ms for ACKs, retried,
	// and rxe (Linux 6.1) failed the retried multi-packet write with
	// "remote invalid request error".
	cfg.ackTimeout = loadAckTimeout
	l := &loadStream{size: size, done: make(chan error, 1)}
	defer func() {
		if err != nil {
			_ = l.close() // err says why the start failed; what close adds is its echo
		}
	}()
	if l.src, err = NewEndpoint(cfg); err != nil {
		return fmt.Errorf("rdmalat: %s: %w", env.VarLoad, err)
	}
	if p.peer != nil {
		if l.peer, l.remote, err = dialLoadPeer(p.peer, l.src); err != nil {
			return err
		}
	} else {
		dcfg := cfg
		if p.PeerDevice.Name != "" && p.PeerDevice.Name != cfg.Device {
			dcfg.Device, dcfg.Port = p.PeerDevice.Name, 0
		}
		if l.dst, err = NewEndpoint(dcfg); err != nil {
			return fmt.Errorf("rdmalat: %s: %w", env.VarLoad, err)
		}
		l.remote = l.dst.Info()
		if err = l.src.Connect(l.remote); err != nil {
			return err
		}
		if err = l.dst.Connect(l.src.Info()); err != nil {
			return err
		}
	}
	cpu := spareCPU(p.CPUs)
	started := make(chan error, 1)
	l.running = true
	go l.run(cpu, p.Timeout, started)
	if err = <-started; err != nil {
		return err
	}
	p.load = l
	p.closers = append(p.closers, l.close)
	return nil
}

// spareCPU is a CPU this process may run on that neither measuring
// thread is pinned to, or the zero CPU (unpinned) when there is none.
func spareCPU(busy [2]env.CPU) env.CPU {
	all, err := env.AllowedCPUs()
	if err != nil {
		return env.CPU{}
	}
	for _, id := range slices.Backward(all) {
		if a, _ := busy[0].ID(); a == id && busy[0].Pinned() {
			continue
		}
		if b, _ := busy[1].ID(); b == id && busy[1].Pinned() {
			continue
		}
		return env.PinTo(id)
	}
	return env.CPU{}
}

// run posts and reposts the stream's writes until stop, a failed
// completion, or no completion within timeout.
func (l *loadStream) run(cpu env.CPU, timeout time.Duration, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, err := pinThread(cpu); err != nil {
		l.done <- err // close reads it
		started <- err
		return
	}
	remote := l.remote
	wr := verbs.SendWR{
		Op: verbs.OpWrite, Local: l.src.mr.SGE(l.src.lay.send, l.size),
		RemoteAddr: remote.Addr, RKey: remote.RKey, Flags: verbs.FlagSignaled,
	}
	for range loadDepth {
		if err := l.src.qp.PostSend(&wr); err != nil {
			err = fmt.Errorf("rdmalat: load stream: %w", err)
			l.done <- err // close reads it
			started <- err
			return
		}
	}
	started <- nil
	l.done <- l.stream(&wr, timeout)
}

func (l *loadStream) stream(wr *verbs.SendWR, timeout time.Duration) error {
	wcs := make([]verbs.WorkCompletion, loadDepth)
	last := time.Now()
	for spins := 0; !l.stop.Load(); spins++ {
		n, err := l.src.sendCQ.Poll(wcs)
		if err != nil {
			return fmt.Errorf("rdmalat: load stream: %w", err)
		}
		if n == 0 {
			if spins&1023 == 0 && time.Since(last) > timeout {
				return fmt.Errorf("rdmalat: load stream: no completion within %v (%s)", timeout, env.VarTimeout)
			}
			continue
		}
		last = time.Now()
		for _, wc := range wcs[:n] {
			if wc.Status != verbs.WCSuccess {
				return fmt.Errorf("rdmalat: load stream: RDMA WRITE completion failed: %w", wc.Status)
			}
			l.bytes.Add(uint64(l.size))
			if err := l.src.qp.PostSend(wr); err != nil {
				return fmt.Errorf("rdmalat: load stream: %w", err)
			}
		}
	}
	return nil
}

// close stops the stream, waits for it, and releases its endpoints and
// its rdmapeer session; it returns the stream's error if it ended on one.
func (l *loadStream) close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	var err error
	if l.running {
		l.stop.Store(true)
		select {
		case err = <-l.done:
		case <-time.After(10 * time.Second):
			err = errors.New("rdmalat: load stream did not stop within 10s")
		}
	}
	// The source first: the target's session ends once no write of the
	// stream can reach it.
	err = errors.Join(err, l.src.Close(), l.dst.Close())
	if l.peer != nil {
		err = errors.Join(err, l.peer.close(l.bytes.Load()))
	}
	return err
}

// loadMeter is the load stream's bytes at the start of a measured run.
type loadMeter struct {
	l     *loadStream
	bytes uint64
	t     time.Time
}

// startLoadMeter starts the meter of a measured run; in two-node mode it
// first renews the stream's rdmapeer session for the run, failing b when
// the peer does not answer.
func startLoadMeter(b B, p *Pair) loadMeter {
	if p.load == nil {
		return loadMeter{}
	}
	if p.load.peer != nil {
		if err := p.load.peer.renew(p.load.size); err != nil {
			b.Fatal(err)
		}
	}
	return loadMeter{l: p.load, bytes: p.load.bytes.Load(), t: time.Now()}
}

// report reports the stream's throughput since the meter started as
// load-MB/s (10^6 bytes a second, as testing's MB/s), and fails b when
// the stream has ended on an error.
func (m loadMeter) report(b B) {
	if m.l == nil {
		return
	}
	select {
	case err := <-m.l.done:
		m.l.done <- err // close reads it again
		if err != nil {
			b.Fatal(err)
		}
	default:
	}
	d := time.Since(m.t).Seconds()
	b.ReportMetric(float64(m.l.bytes.Load()-m.bytes)/1e6/d, "load-MB/s")
}

// StopLoad stops the load stream and releases its queue pairs; it
// returns the stream's error if it ended on one. Without a stream it does
// nothing.
func (p *Pair) StopLoad() error {
	if p.load == nil {
		return nil
	}
	err := p.load.close()
	p.load = nil
	return err
}

// Load returns the load stream's message size, 0 without one.
func (p *Pair) Load() int {
	if p.load == nil {
		return 0
	}
	return p.load.size
}
