//go:build linux

package rdmalat_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestGap: with Pair.Gap (RDMABENCH_GAP) the initiator idles before each
// round trip, the run lasts at least the gaps, the samples hold none of
// it, and the configuration lines record it. Rounds with and without a
// gap alternate on one pair, so that the host's load moves both alike.
func TestGap(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	cpus, err := c.PinCPUs()
	require.NoError(t, err)
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{Device: c.Device, GIDIndex: c.GIDIndex, Op: spec.Write, Transport: spec.RC, MaxSize: 64, Inline: c.Inline, MTU: c.MTU},
		CPUs:     cpus, Timeout: 10 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })

	// Under TCG on a loaded host every run has multi-millisecond stalls,
	// so the checks read each run's minimum, which they do not reach: with
	// the gap in the samples the minimum one-way figure would be at least
	// gap/2; without it rxe shows a minimum that rises after an idle
	// (12 us back to back, 32-36 us after 2 ms, in the VM).
	const n, gap, rounds = 120, 2 * time.Millisecond, 3
	var none, gapped []float64
	for range rounds {
		for _, g := range []time.Duration{0, gap} {
			p.Gap = g
			b := rdmalattest.NewMetricsB(t, n)
			start := time.Now()
			rdmalat.Measure(b, p, 64, 10, nil)
			took := time.Since(start)
			lo := b.Metrics["min-ns"]
			t.Logf("gap %v: min %.0f ns, p50 %.0f ns, p90 %.0f ns; %d round trips took %v", g, lo, b.Metrics["p50-ns"], b.Metrics["p90-ns"], n, took)
			if g == 0 {
				none = append(none, lo)
				continue
			}
			gapped = append(gapped, lo)
			assert.GreaterOrEqual(t, took, n*gap, "every round trip waits out its gap")
			assert.Less(t, lo, float64(gap/4), "the fastest sample, %.0f ns one-way, holds no part of the %v gap", lo, gap)
		}
	}
	slices.Sort(none)
	slices.Sort(gapped)
	t.Logf("min one-way (ns) per run, sorted: back to back %v; after a %v gap %v", none, gap, gapped)
	assert.Greater(t, gapped[rounds/2], none[rounds/2], "after an idle the fastest round trip is slower than back to back (medians over %d runs)", rounds)

	p.Gap = gap
	lines := strings.Join(testenv.ConfigLines(p, c), "\n")
	assert.Contains(t, lines, "rdmabench-gap: 2ms")
	p.Gap = 0
	assert.NotContains(t, testenv.ConfigLines(p, c), "rdmabench-gap", "no line when unset: old result files still compare")
}
