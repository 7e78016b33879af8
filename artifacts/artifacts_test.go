package artifacts

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// samples returns n samples: 10000 + (i*37 % 1000) ns, i.e. 10000..10999
// evenly, except stalls samples of 150000 ns (15x the median) spread
// through the run.
func samples(n, stalls int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = 10000 + int64(i*37%1000)
	}
	for k := range stalls {
		s[(k*n)/stalls+1] = 150000
	}
	return s
}

func TestWriteRun(t *testing.T) {
	dir := t.TempDir()
	raw := samples(5000, 3)
	h := FromSamples(raw)
	res, err := Write(dir, Run{Name: "BenchmarkRDMAWrite/size=2", Size: 2, Hist: h, Samples: raw})
	require.NoError(t, err)
	assert.Equal(t, []string{"latency.samples.txt", "latency.hlog", "latency.hgrm"}, res.Files, "no plots: they are latplot's")
	for _, f := range res.Files {
		assert.FileExists(t, filepath.Join(dir, f))
	}

	// The counts match; stalls are the 3 slow samples; p99.99 needs 10000;
	// mean and standard deviation are exact, from the samples.
	assert.Equal(t, int64(5000), res.Count)
	assert.Equal(t, int64(3), res.Stalls)
	assert.Equal(t, 10000.0, res.Min)
	assert.Equal(t, 150000.0, res.Max)
	var sum float64
	for _, v := range raw {
		sum += float64(v)
	}
	assert.InDelta(t, sum/5000, res.Mean, 1e-6)
	assert.Equal(t, []string{"p50", "p90", "p99", "p99.9"}, slices.Sorted(maps.Keys(res.Percentiles)))
	assert.NotContains(t, res.Percentiles, "p99.99")
	// Nearest rank 2500 of the sorted samples: 3 stalls replaced three
	// values, the 2500th is 10499 or 10500; the histogram reads it at most
	// 0.1% high.
	assert.InDelta(t, 10500, res.Percentiles["p50"], 12)
	// Rank 4995 of 5000 is below the 3 stalls, at the top of the good ones.
	assert.InDelta(t, 10999, res.Percentiles["p99.9"], 12)

	// The samples come back in order.
	back, err := ReadSamples(filepath.Join(dir, "latency.samples.txt"))
	require.NoError(t, err)
	assert.Equal(t, raw, back)

	// The HDR log decodes with hdrhistogram-go into the same histogram.
	hs, err := ReadHlog(filepath.Join(dir, "latency.hlog"))
	require.NoError(t, err)
	require.Len(t, hs, 1)
	assert.Equal(t, "BenchmarkRDMAWrite/size=2", hs[0].Tag())
	assert.Equal(t, h.TotalCount(), hs[0].TotalCount())
	assert.Equal(t, h.ValueAtQuantile(99), hs[0].ValueAtQuantile(99))
	assert.True(t, h.Equals(hs[0]) || h.Max() == hs[0].Max())

	// The .hgrm is HdrHistogram's percentile text, in microseconds.
	hgrm, err := os.ReadFile(filepath.Join(dir, "latency.hgrm"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(hgrm), " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n"), "%.80q", hgrm)
	assert.Contains(t, string(hgrm), "Total count    =         5000]")
}

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	var results []Result
	for _, size := range []int{2, 4096} {
		raw := samples(2000, 1)
		r, err := Write(t.TempDir(), Run{Name: "BenchmarkRDMAWrite/size=" + strconv.Itoa(size), Size: size, Hist: FromSamples(raw), Samples: raw})
		require.NoError(t, err)
		results = append(results, r)
	}
	s := Summary{Benchmark: "BenchmarkRDMAWrite", OneWay: true, Config: map[string]string{"rdma-device": "rxe0"}, Results: results}
	path, err := WriteSummary(dir, s)
	require.NoError(t, err)
	back, err := ReadSummary(path)
	require.NoError(t, err)
	s.Unit = "ns"
	assert.Equal(t, s, back)
	assert.Len(t, back.Results, 2, "every size, not the last")
	assert.Equal(t, int64(1), back.Results[1].Stalls)
}

func TestScale(t *testing.T) {
	rtt := FromSamples(samples(10000, 0))
	one := Scale(rtt, 0.5)
	assert.Equal(t, rtt.TotalCount(), one.TotalCount())
	for _, q := range []float64{50, 90, 99, 99.9} {
		assert.InEpsilon(t, float64(rtt.ValueAtQuantile(q))/2, float64(one.ValueAtQuantile(q)), 0.002, "p%v", q)
	}
}

func TestReadSamplesPerftestStyle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.txt")
	require.NoError(t, os.WriteFile(path, []byte("4.5\n5.0\n"), 0o644))
	got, err := ReadSamples(path)
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 5}, got)
	require.NoError(t, os.WriteFile(path, []byte("4.5\nx\n"), 0o644))
	_, err = ReadSamples(path)
	assert.ErrorContains(t, err, `raw.txt:2: "x" is not a sample`)
}

func TestTag(t *testing.T) {
	assert.Equal(t, "BenchmarkX/size=2", hlogTag("BenchmarkX/size=2"))
	assert.Equal(t, "a_b_c", hlogTag("a b,c"))
}

// BenchmarkWrite measures what leaving a run's files costs after its
// measured loop: 20000 samples, every file (latplot's BenchmarkWritePlots
// measures the plots).
func BenchmarkWrite(b *testing.B) {
	raw := samples(20000, 5)
	h := FromSamples(raw)
	dir := b.TempDir()
	for b.Loop() {
		if _, err := Write(dir, Run{Name: "BenchmarkX/size=2", Size: 2, Hist: h, Samples: raw}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadHlogEndless: a line that never ends (/dev/zero) is an error
// naming it, not the host's memory.
func TestReadHlogEndless(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("skipping test: no /dev/zero: %v", err)
	}
	_, err := ReadHlog("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero:1: a line over 1048576 bytes: not an HDR log") {
		t.Fatalf("ReadHlog(/dev/zero) = %v", err)
	}
}
