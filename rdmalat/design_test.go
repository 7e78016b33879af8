//go:build cgo && linux

package rdmalat

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/verbs"
)

// BenchmarkLoopDesign is the measurement behind the engine's design: the
// same RDMA WRITE ping-pong initiator written in C (the engine) and in Go
// (one cgo call to post, one per CQ poll, Go spinning on the polled byte),
// against the same C responder on the same connection, in one process.
// Compare the loop=c and loop=go rows' p50-ns and p99-ns (benchstat -col
// /loop). It skips or fails where no device is usable by env's one rule.
func BenchmarkLoopDesign(b *testing.B) {
	c, err := env.Load()
	if err != nil {
		b.Fatal(err)
	}
	dev, err := env.ResolveDevice(verbs.Probe{}, c)
	if err != nil {
		env.Unavailable(b, c.Promised(), err)
	}
	cpus, err := DefaultCPUs()
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewLoopback(LoopbackConfig{
		Endpoint: EndpointConfig{Device: dev, GIDIndex: env.GIDBest, MaxSize: 4096, Inline: InlineDevice},
		CPUs:     cpus, Timeout: 5 * time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	for _, size := range []int{2, 4096} {
		b.Run("loop=c/size="+strconv.Itoa(size), func(b *testing.B) { Measure(b, p, size, 1000, nil) })
		b.Run("loop=go/size="+strconv.Itoa(size), func(b *testing.B) { measureGoLoop(b, p, size, 1000) })
	}
}

// measureGoLoop is Measure with the initiator's round trip in Go.
func measureGoLoop(b *testing.B, p *Pair, size, warmup int) {
	restore, err := pinThread(p.CPUs[0])
	if err != nil {
		b.Fatal(err)
	}
	defer restore()
	ep := p.Local
	buf := ep.mr.Bytes()
	clear(buf)
	if err := p.Responder.Start(size, func(error) {}); err != nil {
		b.Fatal(err)
	}
	wr := verbs.SendWR{
		Op:         verbs.OpWrite,
		Local:      verbs.SGE{Addr: ep.mr.Addr(), Len: uint32(size), LKey: ep.mr.LKey()},
		RemoteAddr: p.Remote.Addr, RKey: p.Remote.RKey,
		Flags: verbs.FlagSignaled,
	}
	if size <= ep.InlineMax() {
		wr.Flags |= verbs.FlagInline
	}
	post := &buf[size-1]
	pollByte := &buf[ep.lay.recv+size-1]
	wc := make([]verbs.WorkCompletion, 1)
	var cnt uint8
	roundTrip := func() int64 {
		t0 := time.Now()
		cnt++
		*post = cnt
		if err := ep.qp.PostSend(&wr); err != nil {
			b.Fatal(err)
		}
		for {
			n, err := ep.sendCQ.Poll(wc)
			if err != nil {
				b.Fatal(err)
			}
			if n == 1 {
				break
			}
		}
		if wc[0].Status != verbs.WCSuccess {
			b.Fatal(wc[0].Status)
		}
		deadline := time.Now().Add(5 * time.Second)
		for spins := 0; loadByte(pollByte) != cnt; spins++ {
			if spins&1023 == 0 && time.Now().After(deadline) {
				b.Fatal("no answer from the responder")
			}
		}
		return time.Since(t0).Nanoseconds()
	}
	for range warmup {
		roundTrip()
	}
	rec := latency.NewRecorder(true)
	b.ReportAllocs()
	for b.Loop() {
		rec.Record(roundTrip())
	}
	answered, err := p.Responder.Stop()
	if err != nil {
		b.Fatal(err)
	}
	if answered != uint64(warmup)+uint64(rec.Count()) {
		b.Fatalf("responder answered %d of %d", answered, warmup+int(rec.Count()))
	}
	latency.Report(b, rec.Summary())
}

// loadByte is an atomic load of one byte (sync/atomic has none): the
// aligned 32-bit word holding it, shifted.
func loadByte(p *uint8) uint8 {
	off := uintptr(unsafe.Pointer(p)) & 3
	word := (*uint32)(unsafe.Add(unsafe.Pointer(p), -int(off)))
	return uint8(atomic.LoadUint32(word) >> (off * 8))
}
