package rdmabench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// These tests drive the RDMA WRITE engine on a real device: in the
// soft-RoCE VM (make test) that is rxe0, and rxe1 for the cross-device
// cases. Elsewhere they skip unless RDMABENCH_REQUIRE=1 or RDMABENCH_DEVICE
// promises a device.

func loopback(t *testing.T, peerDevice string, maxSize int, timeout time.Duration) *rdmalat.Pair {
	t.Helper()
	c := testenv.MustHaveRDMA(t)
	c.PeerDevice, c.Timeout = peerDevice, timeout
	p, err := testenv.NewPair(c, spec.Write, maxSize)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	t.Logf("loopback %s -> %s, cpus %v", p.Local.Device().Name, p.PeerDevice.Name, p.CPUs)
	return p
}

// runRoundTrips runs n measured round trips after warmup and checks that
// each took a plausible time and that the responder answered every one.
// More than 256 round trips wrap the one-byte counter, which the C loop
// checks in order on both sides.
func runRoundTrips(t *testing.T, p *rdmalat.Pair, size, warmup, n int) *latency.Recorder {
	t.Helper()
	run, err := p.Start(size, warmup)
	require.NoError(t, err)
	defer run.Close()
	rec := latency.NewRecorder(true)
	for range n {
		rtt, err := run.Next()
		require.NoError(t, err)
		require.Positive(t, rtt)
		require.Less(t, rtt, int64(10*time.Second))
		rec.Record(rtt)
	}
	ran := run.RoundTrips()
	require.NoError(t, run.Close(), "responder must answer every round trip, in order")
	assert.GreaterOrEqual(t, ran, uint64(warmup+n))
	return rec
}

func TestWriteLoopback(t *testing.T) {
	p := loopback(t, "", 64<<10, 5*time.Second)
	for _, size := range []int{1, 2, 64, 4096, 64 << 10} {
		rec := runRoundTrips(t, p, size, 10, 600)
		s := rec.Summary()
		assert.Equal(t, int64(600), s.Count)
		assert.LessOrEqual(t, s.Min, s.Mean)
		assert.LessOrEqual(t, s.Mean, s.Max)
		t.Logf("size %d: min %.1f us, mean %.1f us, max %.1f us", size, s.Min/1e3, s.Mean/1e3, s.Max/1e3)
	}
}

func TestWriteCrossDevice(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	p := loopback(t, second, 4096, 5*time.Second)
	require.NotEqual(t, p.Local.Device().Name, p.PeerDevice.Name)
	rec := runRoundTrips(t, p, 4096, 10, 300)
	assert.Equal(t, int64(300), rec.Count())
}

// A responder that stops answering (a dead peer) ends the initiator's loop
// with ErrTimeout within the configured timeout, not a hang.
func TestWritePeerGoneTimesOut(t *testing.T) {
	const timeout = 500 * time.Millisecond
	p := loopback(t, "", 64, timeout)
	elapsed, err := rdmalattest.NextAfterPeerGone(t, p)
	assert.True(t, errors.Is(err, rdmalat.ErrTimeout), "got %v", err)
	assert.Contains(t, err.Error(), "RDMABENCH_TIMEOUT")
	assert.Less(t, elapsed, timeout+3*time.Second)
	t.Logf("failed after %v: %v", elapsed, err)
}

// Measure reports every metric, with 0 allocations per round trip, and the
// raw samples match the sample count.
func TestMeasure(t *testing.T) {
	p := loopback(t, "", 4096, 5*time.Second)
	var raw bytes.Buffer
	var n int
	res := testing.Benchmark(func(b *testing.B) {
		raw.Reset()
		rdmalat.Measure(b, p, 64, 100, &raw)
		n = b.N
	})
	require.Positive(t, res.N, "the benchmark failed; run with -v")
	for _, unit := range []string{"ns/op", "min-ns", "p50-ns", "max-ns", "stddev-ns"} {
		assert.Contains(t, res.Extra, unit)
	}
	assert.LessOrEqual(t, res.Extra["min-ns"], res.Extra["p50-ns"])
	assert.LessOrEqual(t, res.Extra["p50-ns"], res.Extra["max-ns"])
	assert.Zero(t, res.AllocsPerOp())
	assert.Equal(t, n, strings.Count(raw.String(), "\n"))
	t.Logf("%d samples: %v", res.N, res.Extra)
}

// RDMABENCH_INLINE=0 turns inline off even where the device rounds a QP's
// inline capacity up (rxe gives 16 bytes when asked for 0); -1 takes the
// device's limit.
func TestInlineSetting(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	for _, tc := range []struct {
		inline int
		want   func(limit int) int
	}{
		{0, func(int) int { return 0 }},
		{64, func(limit int) int { return min(64, limit) }},
		{-1, func(limit int) int { return limit }},
	} {
		ep, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: c.Device, GIDIndex: -1, MaxSize: 64, Inline: tc.inline})
		require.NoError(t, err)
		limit := ep.Device().Inline
		if tc.inline == -1 {
			assert.Positive(t, limit, "the device's limit")
		}
		assert.Equal(t, tc.want(limit), ep.InlineMax(), "RDMABENCH_INLINE=%d", tc.inline)
		require.NoError(t, ep.Close())
	}
}
