package rdmalat

import (
	"io"
	"testing"
)

// Measure is the body of a latency benchmark: it starts a Run of size
// bytes on p (warm-up first, excluded), records one sample per b.Loop
// iteration, and reports the latency metrics (see Report) after the loop:
// one-way (RTT/2) for the ping-pong operations, whole for READ and
// atomics, as perftest reports them (spec.Op.Halved). With raw non-nil
// every sample is also written to it, in order. It allocates nothing per
// iteration. Call it inside a sub-benchmark, with the
// pair built once in the parent:
//
//	pair, _ := testenv.MustPair(b, 4096)
//	b.Run("size=64", func(b *testing.B) { rdmalat.Measure(b, pair, 64, 1000, nil) })
func Measure(b *testing.B, p *Pair, size, warmup int, raw io.Writer) {
	b.Helper()
	rec := NewRecorder(p.Local.Op().Halved())
	var rw *RawWriter
	if raw != nil {
		rw = NewRawWriter(raw)
		rec.SetRaw(rw)
	}
	run, err := p.Start(size, warmup)
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	b.ReportAllocs()
	for b.Loop() {
		rtt, err := run.Next()
		if err != nil {
			b.Fatal(err)
		}
		rec.Record(rtt)
	}
	if err := run.Close(); err != nil {
		b.Fatal(err)
	}
	if rw != nil {
		if err := rw.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	Report(b, rec.Summary())
}
