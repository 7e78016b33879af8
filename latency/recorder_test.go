package latency

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func record(halve bool, rtts ...int64) *Recorder {
	r := NewRecorder(halve)
	for _, v := range rtts {
		r.Record(v)
	}
	return r
}

func TestPPM(t *testing.T) {
	for _, tc := range []struct {
		p        PPM
		name     string
		minCount int64
	}{
		// MinCount = ceil(1e6 / (1e6 - p)).
		{500000, "p50", 2},
		{900000, "p90", 10},
		{990000, "p99", 100},
		{999000, "p99.9", 1000},
		{999900, "p99.99", 10000},
	} {
		assert.Equal(t, tc.name, tc.p.Name())
		assert.Equal(t, tc.name+"-ns", tc.p.Unit())
		assert.Equal(t, tc.minCount, tc.p.MinCount(), tc.name)
	}
}

func TestSummaryFourSamples(t *testing.T) {
	// RTTs 2, 4, 6, 8 ns halve to one-way 1, 2, 3, 4.
	s := record(true, 8, 2, 6, 4).Summary()
	assert.Equal(t, int64(4), s.Count)
	assert.True(t, s.OneWay)
	assert.Equal(t, 1.0, s.Min)
	assert.Equal(t, 4.0, s.Max)
	assert.Equal(t, 2.5, s.Mean)
	// Deviations from 2.5: -1.5 -0.5 0.5 1.5; squares sum to 5; 5/(4-1).
	assert.InDelta(t, math.Sqrt(5.0/3), s.StdDev, 1e-12)
	// p50: rank floor(0.5*4 + 0.5) = 2, the second smallest: one-way 2.
	p50, ok := s.Percentile(500000)
	assert.True(t, ok)
	assert.Equal(t, 2.0, p50)
	// p90 needs 10 samples: left out, with a warning.
	_, ok = s.Percentile(900000)
	assert.False(t, ok)
	assert.Contains(t, s.Warnings, "p90 needs at least 10 samples, have 4")
}

func TestSummaryThousandSamples(t *testing.T) {
	// One-way latencies 1..1000 ns (RTTs 2..2000, exact in the histogram
	// below 2048).
	r := NewRecorder(true)
	for i := int64(1000); i >= 1; i-- {
		r.Record(2 * i)
	}
	s := r.Summary()
	assert.Equal(t, 1.0, s.Min)
	assert.Equal(t, 1000.0, s.Max)
	assert.InDelta(t, 500.5, s.Mean, 1e-9)
	// Sample variance of 1..n is n(n+1)/12 = 1000*1001/12.
	assert.InDelta(t, math.Sqrt(1000.0*1001/12), s.StdDev, 1e-9)
	for _, tc := range []struct {
		p    PPM
		want float64 // rank floor(p*1000 + 0.5) of 1..1000 is the value itself
	}{
		{500000, 500}, {900000, 900}, {990000, 990},
		{999000, 999}, // perftest's 99.9% at 1000 iterations is t_max; ours is not
	} {
		v, ok := s.Percentile(tc.p)
		assert.True(t, ok, tc.p.Name())
		assert.Equal(t, tc.want, v, tc.p.Name())
	}
	_, ok := s.Percentile(999900)
	assert.False(t, ok, "p99.99 from 1000 samples would be the maximum")
}

func TestSummaryResolution(t *testing.T) {
	// Beyond 2048 ns the histogram keeps 3 significant digits: a percentile
	// may read up to 0.1% above the sample, never below, never above Max.
	r := NewRecorder(false)
	for range 5000 {
		r.Record(100000)
		r.Record(200000)
	}
	s := r.Summary()
	p50, ok := s.Percentile(500000)
	require.True(t, ok)
	assert.GreaterOrEqual(t, p50, 100000.0)
	assert.LessOrEqual(t, p50, 100100.0)
	p99, _ := s.Percentile(990000)
	assert.Equal(t, 200000.0, p99, "clipped to the exact maximum")
	assert.False(t, s.OneWay)
	assert.Equal(t, 150000.0, s.Mean)
}

func TestSummaryEmptyAndReset(t *testing.T) {
	r := record(true, 10, 20)
	r.Reset()
	s := r.Summary()
	assert.Zero(t, s.Count)
	assert.Equal(t, []string{"no samples"}, s.Warnings)
	r.Record(10)
	assert.Equal(t, 5.0, r.Summary().Min)
}

func TestSummaryOverflow(t *testing.T) {
	s := record(false, 10, 200*1000000000).Summary()
	assert.Equal(t, 200e9, s.Max)
	assert.Contains(t, s.Warnings[len(s.Warnings)-1], "1 samples above")
}

// Stalls: samples above 10 x the median. 100 samples: 94 of 1000 ns (the
// median), one of 10000 (not above 10 x 1000), three of 10011 and two of
// 50000: 5 stalls.
func TestStalls(t *testing.T) {
	r := NewRecorder(false)
	for range 94 {
		r.Record(1000)
	}
	r.Record(10000)
	for range 3 {
		r.Record(10011) // 10011 and 10000 are distinct at 3 significant digits' resolution (10 ns buckets)
	}
	r.Record(50000)
	r.Record(50000)
	assert.Equal(t, int64(5), r.Summary().Stalls)
	assert.Equal(t, int64(0), record(false).Summary().Stalls)
}

type fakeReporter map[string]float64

func (f fakeReporter) ReportMetric(v float64, unit string) { f[unit] = v }

func TestReport(t *testing.T) {
	r := NewRecorder(true)
	for i := int64(1); i <= 100; i++ {
		r.Record(2 * i) // one-way 1..100
	}
	got := fakeReporter{}
	Report(got, r.Summary())
	assert.Equal(t, fakeReporter{
		"ns/op":     50.5,
		"stalls":    0, // nothing above 10 x the median of 50
		"min-ns":    1,
		"p50-ns":    50, // rank floor(50.5) = 50
		"p90-ns":    90, // rank floor(90.5) = 90
		"p99-ns":    99, // rank floor(99.5) = 99
		"max-ns":    100,
		"stddev-ns": math.Sqrt(100.0 * 101 / 12),
	}, got, "p99.9 and p99.99 need more than 100 samples")

	none := fakeReporter{}
	Report(none, NewRecorder(true).Summary())
	assert.Empty(t, none)
}

func TestRawWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewRawWriter(&buf)
	r := NewRecorder(true)
	r.SetRaw(w)
	r.Record(3)
	r.Record(4000)
	require.NoError(t, w.Flush())
	assert.Equal(t, "1.5\n2000.0\n", buf.String())

	buf.Reset()
	w = NewRawWriter(&buf)
	r = NewRecorder(false)
	r.SetRaw(w)
	r.Record(7)
	require.NoError(t, w.Flush())
	assert.Equal(t, "7.0\n", buf.String())
}

func TestRecordAllocs(t *testing.T) {
	r := NewRecorder(true)
	r.SetRaw(NewRawWriter(discard{}))
	allocs := testing.AllocsPerRun(10000, func() { r.Record(12345) })
	assert.Zero(t, allocs)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestWriteTableGolden(t *testing.T) {
	big := NewRecorder(true)
	for i := int64(1); i <= 20000; i++ {
		big.Record(2000 + i%1000) // one-way 1000.0 .. 1499.5 ns
	}
	rows := []LabeledSummary{
		{"size=2", big.Summary()},
		{"size=4096", record(true, 8000, 9000, 30000).Summary()},
		{"empty", NewRecorder(true).Summary()},
	}
	var out bytes.Buffer
	require.NoError(t, WriteTable(&out, rows))
	golden(t, "table.golden", out.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), string(got))
}

// BenchmarkRecord is the cost of recording one sample (histogram, exact
// moments), the part of a sample's measurement done in Go.
func BenchmarkRecord(b *testing.B) {
	r := NewRecorder(true)
	v := int64(20000)
	b.ReportAllocs()
	for b.Loop() {
		r.Record(v)
		v ^= 0x155
	}
}
