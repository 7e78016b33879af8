package latency

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

// The statistics live in constant memory: recording a million samples
// allocates nothing per sample and the histogram's size does not depend on the count.
func TestRecorderMemoryConstant(t *testing.T) {
	r := NewRecorder(true)
	size := r.Histogram().ByteSize()
	assert.Less(t, size, 1<<20, "histogram bytes")
	// MemStats counts every goroutine's allocations: the count means
	// something only when this test's goroutine is the only one running.
	// Even then the runtime and the testing package allocate now and then
	// (about one stray allocation in 100 runs of this test), so the
	// measure is testing.AllocsPerRun's: allocations per run of 200,000
	// samples, averaged over 5 runs. Anything per sample would read
	// 200,000; a stray one reads 0.
	goleak.VerifyNone(t)
	i := int64(0)
	allocs := testing.AllocsPerRun(5, func() {
		for range 200_000 {
			r.Record(1000 + i%100000)
			i++
		}
	})
	assert.Zero(t, allocs, "allocations per 200,000 samples recorded")
	assert.Equal(t, size, r.Histogram().ByteSize())
	t.Logf("histogram: %d bytes for %d samples", size, r.Count())
}
