package cpuprobe

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func TestContention(t *testing.T) {
	shared := Result{CPUs: []CPUResult{
		{CPU: 0, Alone: ms(10), AloneP90: ms(10.5), Together: ms(16.2), TogetherP90: ms(17), Worst: ms(25)},
		{CPU: 1, Alone: ms(10), AloneP90: ms(10.2), Together: ms(15), TogetherP90: ms(18), Worst: ms(20)},
	}}
	c := shared.Contention()
	assert.Equal(t, []int{0, 1}, c.CPUs)
	assert.InDelta(t, 1.62, c.Slowdown, 1e-9, "the worse CPU's")
	assert.InDelta(t, 1.2, c.Unsteady, 1e-9, "CPU 1 together: 18/15")
	assert.InDelta(t, 2.5, c.Worst, 1e-9)
	assert.Equal(t, hostinfo.Line{Key: "cpu-contention", Value: "1.62x with all busy, p90 1.20x the median, worst 2.50x; CPUs 0-1"}, shared.Line())
	w, ok := shared.Warning()
	require.True(t, ok)
	assert.Equal(t, "cpu-contention", w.Check)
	assert.Contains(t, w.Problem, "CPUs 0-1 run a busy loop 1.62x slower with all busy than alone (worst block 2.50x) and vary in speed")
	assert.Contains(t, w.Fix, env.VarCPUs)

	separate := Result{CPUs: []CPUResult{
		{CPU: 2, Alone: ms(10), AloneP90: ms(10.1), Together: ms(10.3), TogetherP90: ms(10.5), Worst: ms(14)},
		{CPU: 5, Alone: ms(10), AloneP90: ms(10.1), Together: ms(10.1), TogetherP90: ms(10.2), Worst: ms(11)},
	}}
	_, ok = separate.Warning()
	assert.False(t, ok, "3% slower and steady is not contention")
	assert.Equal(t, "1.03x with all busy, p90 1.02x the median, worst 1.40x; CPUs 2,5", separate.Line().Value)

	assert.Zero(t, Result{}.Contention().Slowdown, "no CPUs, no ratio (and no division by zero)")
}

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	assert.Equal(t, time.Duration(3), quantile(ds, 0.5))
	assert.Equal(t, time.Duration(5), quantile(ds, 1))
	assert.Equal(t, time.Duration(4), quantile(ds, 0.75))
	assert.Equal(t, []time.Duration{5, 1, 4, 2, 3}, ds, "the input is left as it was")
	assert.Zero(t, quantile(nil, 0.5))
}

func TestBadOptions(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		cpus []int
		want string
	}{
		{"none", nil, "want at least two CPUs, those the benchmark polls on (e.g. 0,1); got 0"},
		{"one", allowed[:1], "got 1"},
		{"not allowed", []int{allowed[0], 4095}, "CPUs=" + strconv.Itoa(allowed[0]) + ",4095: this process may run on CPUs " + env.FormatCPUList(allowed)},
		{"twice", []int{allowed[0], allowed[0]}, "given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Probe(context.Background(), Options{CPUs: tc.cpus})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err = Probe(context.Background(), Options{CPUs: []int{allowed[0], 4095}, From: "-cpus"})
	assert.ErrorContains(t, err, "-cpus="+strconv.Itoa(allowed[0])+",4095: this process may run on CPUs", "the error names the flag the CPUs came from")
}

// TestProbe runs a short probe on two CPUs this process may use. What it
// finds depends on the host, so it checks the shape of the result and
// that the probing threads' affinity did not leak into the caller's.
func TestProbe(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	if len(allowed) < 2 {
		t.Fatalf("this test needs two CPUs; the process may use %s", env.FormatCPUList(allowed))
	}
	cpus := allowed[len(allowed)-2:]
	r, err := Probe(context.Background(), Options{CPUs: cpus, Block: time.Millisecond, Blocks: 8})
	require.NoError(t, err)
	require.Len(t, r.CPUs, 2)
	for i, c := range r.CPUs {
		assert.Equal(t, cpus[i], c.CPU)
		assert.Positive(t, c.Alone)
		assert.GreaterOrEqual(t, c.AloneP90, c.Alone)
		assert.GreaterOrEqual(t, c.TogetherP90, c.Together)
		assert.GreaterOrEqual(t, c.Worst, c.TogetherP90, "the slowest block is no faster than the 90th percentile")
	}
	got, err := hostinfo.ParseContention(r.Line().Value)
	require.NoError(t, err, "hostinfo reads the note back")
	assert.Equal(t, cpus, got.CPUs)

	after, err := env.AllowedCPUs()
	require.NoError(t, err)
	assert.Equal(t, allowed, after, "the caller's affinity is as it was")
}

func TestProbeCancelled(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(allowed), 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Probe(ctx, Options{CPUs: allowed[:2], Block: time.Millisecond, Blocks: 4})
	assert.ErrorIs(t, err, context.Canceled)
}
