package rdmalat

import (
	"testing"

	"github.com/rdmabench/rdmabench/latency"
)

// BenchmarkSampleCost is the measurement work per sample: one clock read in
// the C loop (reported as clock-ns) plus recording the sample in Go
// (ns/op).
func BenchmarkSampleCost(b *testing.B) {
	clock := clockCost(1 << 20)
	r := latency.NewRecorder(true)
	v := int64(20000)
	b.ReportAllocs()
	for b.Loop() {
		r.Record(v)
		v ^= 0x155
	}
	if clock > 0 {
		b.ReportMetric(clock, "clock-ns")
	}
}
