package rdmalat

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

// BenchmarkSampleCost is the measurement work per sample: one clock read in
// the C loop (reported as clock-ns) plus recording the sample in Go
// (ns/op).
func BenchmarkSampleCost(b *testing.B) {
	clock := ClockCost(1 << 20)
	r := NewRecorder(true)
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

// The statistics live in constant memory: recording a million samples
// allocates nothing and the histogram's size does not depend on the count.
func TestRecorderMemoryConstant(t *testing.T) {
	r := NewRecorder(true)
	size := r.Histogram().ByteSize()
	assert.Less(t, size, 1<<20, "histogram bytes")
	// MemStats counts every goroutine's allocations: the count means
	// something only when this test's goroutine is the only one running.
	goleak.VerifyNone(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range int64(1_000_000) {
		r.Record(1000 + i%100000)
	}
	runtime.ReadMemStats(&after)
	assert.Zero(t, after.Mallocs-before.Mallocs, "allocations while recording")
	assert.Equal(t, size, r.Histogram().ByteSize())
	t.Logf("histogram: %d bytes for %d samples", size, r.Count())
}
