//go:build linux

package rdmalat_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestLoad: with a load stream of 4 KiB RDMA WRITEs on the same device
// (RDMABENCH_LOAD), Measure reports its throughput beside the latency,
// in every run with it and in none without it. Rounds with and without
// the stream alternate on one pair; their p50s are logged side by side.
func TestLoad(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	p, err := memoryPair(t, c, false, false)
	require.NoError(t, err)
	// Runs of 1000 round trips (25 ms and more) and 4 KiB writes: the
	// stream reaches a few MB/s under TCG, so a 64 KiB write can take 10 ms
	// and a run of 150 round trips saw none complete (0 MB/s, truly).
	const n, rounds, size = 1000, 3, 4 << 10
	var idle, loaded, mbps []float64
	for range rounds {
		b := &metricsB{t: t, n: n, metrics: map[string]float64{}}
		rdmalat.Measure(b, p, 64, 10, nil)
		_, has := b.metrics["load-MB/s"]
		assert.False(t, has, "no load metric without a stream")
		idle = append(idle, b.metrics["p50-ns"])

		require.NoError(t, p.StartLoad(size))
		b = &metricsB{t: t, n: n, metrics: map[string]float64{}}
		rdmalat.Measure(b, p, 64, 10, nil)
		loaded = append(loaded, b.metrics["p50-ns"])
		mbps = append(mbps, b.metrics["load-MB/s"])
		if len(loaded) == rounds {
			lines := strings.Join(testenv.ConfigLines(p, c), "\n")
			assert.Contains(t, lines, "rdmabench-load: 4096")
		}
		require.NoError(t, p.StopLoad())
	}
	t.Logf("p50 one-way (ns): idle %v, under load %v; load %v MB/s", idle, loaded, mbps)
	for _, v := range mbps {
		assert.Positive(t, v, "the load stream's throughput is reported")
	}
	// The direction of the latency is logged, not asserted: under TCG the
	// stream reaches a few MB/s, too little to move rxe's median reliably
	// (medians of 21.3 against 21.6 us were seen), and a check that passes
	// by chance is a flaky test.
	assert.NotContains(t, strings.Join(testenv.ConfigLines(p, c), "\n"), "rdmabench-load", "no line once the stream is stopped")
}
