package artifacts

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
	assert.Equal(t, []string{"latency.samples.txt", "latency.hlog", "latency.hgrm",
		"histogram.png", "histogram.svg", "tail.png", "tail.svg"}, res.Files)
	for _, f := range res.Files {
		assert.FileExists(t, filepath.Join(dir, f))
	}

	// The counts match; stalls are the 3 slow samples; p99.99 needs 10000.
	assert.Equal(t, int64(5000), res.Count)
	assert.Equal(t, int64(3), res.Stalls)
	assert.Equal(t, 10000.0, res.Min)
	assert.Equal(t, 150000.0, res.Max)
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

	// The PNG decodes at the documented size; the SVG is XML with an svg root.
	f, err := os.Open(filepath.Join(dir, "tail.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 7*96, img.Bounds().Dx())
	svg, err := os.ReadFile(filepath.Join(dir, "histogram.svg"))
	require.NoError(t, err)
	assert.Equal(t, "svg", xmlRoot(t, svg))
	// The histogram's log axis reaches the slowest sample, which its
	// label names.
	label := "5000 samples, from " + strconv.FormatFloat(float64(slices.Min(raw))/1000, 'g', 3, 64) + "us"
	assert.True(t, strings.Contains(string(svg), label), "histogram.svg lacks %q", label)
}

func xmlRoot(t *testing.T, b []byte) string {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local
		}
	}
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

func TestStalls(t *testing.T) {
	// Median 10: 101 and 500 are above 10x, 100 is not.
	raw := []int64{10, 10, 10, 10, 100, 101, 500}
	assert.Equal(t, int64(2), StallsOf(raw))
	assert.Equal(t, int64(2), Stalls(FromSamples(raw)))
	assert.Equal(t, int64(0), StallsOf(nil))
	assert.Equal(t, int64(0), Stalls(hdrhistogram.New(1, 1000, 3)))
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
	assert.Equal(t, "BenchmarkX/size=2", Tag("BenchmarkX/size=2"))
	assert.Equal(t, "a_b_c", Tag("a b,c"))
}

// BenchmarkWrite measures what leaving a run's artifacts costs after its
// measured loop: 20000 samples, every file and both plots.
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

func TestWriteNoPlots(t *testing.T) {
	dir := t.TempDir()
	raw := samples(1000, 2)
	h := FromSamples(raw)
	res, err := Write(dir, Run{Name: "BenchmarkRDMAWrite/size=2", Size: 2, Hist: h, Samples: raw, NoPlots: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"latency.samples.txt", "latency.hlog", "latency.hgrm"}, res.Files)
	_, err = os.Stat(filepath.Join(dir, "histogram.png"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	files, err := WritePlots(dir, "BenchmarkRDMAWrite/size=2", h)
	require.NoError(t, err)
	assert.Equal(t, []string{"histogram.png", "histogram.svg", "tail.png", "tail.svg"}, files)
	for _, f := range files {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	files, err = WritePlots(dir, "empty", FromSamples(nil))
	assert.NoError(t, err)
	assert.Empty(t, files)
}
