package verbs

import (
	"testing"
)

// benchPair is a connected RC loopback pair for benchmarks.
func benchPair(b *testing.B) (*side, *side) {
	ctx := openDevice(b)
	src, dst := newSide(b, ctx, RC), newSide(b, ctx, RC)
	connect(b, src, dst)
	return src, dst
}

// BenchmarkPollCQEmpty polls an empty CQ: the bare cost of a crossing.
func BenchmarkPollCQEmpty(b *testing.B) {
	ctx := openDevice(b)
	cq, err := ctx.CreateCQ(16, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cq.Close()
	var wc [16]WorkCompletion
	b.ReportAllocs()
	for b.Loop() {
		if n, err := cq.Poll(wc[:]); n != 0 || err != nil {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkPostPollWrite posts a signaled 2-byte inline RDMA WRITE on a
// loopback RC pair and polls until its completion, per op.
func BenchmarkPostPollWrite(b *testing.B) {
	src, dst := benchPair(b)
	wr := &SendWR{Op: OpWrite, Local: SGE{Addr: src.mr.Addr(), Len: 2}, RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey(),
		Flags: FlagSignaled | FlagInline}
	var wc [1]WorkCompletion
	b.ReportAllocs()
	for b.Loop() {
		if err := src.qp.PostSend(wr); err != nil {
			b.Fatal(err)
		}
		for {
			n, err := src.cq.Poll(wc[:])
			if err != nil {
				b.Fatal(err)
			}
			if n == 1 {
				break
			}
		}
		if wc[0].Status != WCSuccess {
			b.Fatal(wc[0].Err())
		}
	}
}

// BenchmarkPostSend measures posting alone: unsignaled 2-byte inline
// WRITEs, every 64th signaled and waited for, so the queue never fills.
func BenchmarkPostSend(b *testing.B) {
	src, dst := benchPair(b)
	wr := &SendWR{Op: OpWrite, Local: SGE{Addr: src.mr.Addr(), Len: 2}, RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey()}
	var wc [1]WorkCompletion
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		wr.Flags = FlagInline
		signaled := i%8 == 0
		if signaled {
			wr.Flags |= FlagSignaled
		}
		if err := src.qp.PostSend(wr); err != nil {
			b.Fatal(err)
		}
		if signaled {
			for {
				n, err := src.cq.Poll(wc[:])
				if err != nil {
					b.Fatal(err)
				}
				if n == 1 {
					break
				}
			}
		}
	}
}

// BenchmarkPollCQ posts 8 signaled 2-byte inline WRITEs and drains their
// completions with Poll into a 16-entry array: one op is one batch, and
// completions-per-poll says how many a crossing returned on average.
func BenchmarkPollCQ(b *testing.B) {
	const batch = 8
	src, dst := benchPair(b)
	wr := &SendWR{Op: OpWrite, Local: SGE{Addr: src.mr.Addr(), Len: 2}, RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey(),
		Flags: FlagSignaled | FlagInline}
	var wc [16]WorkCompletion
	polls, found := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		for range batch {
			if err := src.qp.PostSend(wr); err != nil {
				b.Fatal(err)
			}
		}
		for got := 0; got < batch; {
			n, err := src.cq.Poll(wc[:])
			if err != nil {
				b.Fatal(err)
			}
			polls++
			if n > 0 {
				found += n
				got += n
			}
		}
	}
	b.ReportMetric(float64(found)/float64(polls), "completions/poll")
}
