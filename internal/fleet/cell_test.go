package fleet

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchmath"
)

// TestSummariseIsBenchmath: a cell's median, interval and warnings are
// benchmath's AssumeNothing summary's, for samples of 1 to 40 values,
// with ties and zeros.
func TestSummariseIsBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tl := newTails()
	for n := 1; n <= 40; n++ {
		for trial := range 20 {
			vs := make([]float64, n)
			for i := range vs {
				switch trial % 4 {
				case 0:
					vs[i] = float64(rng.IntN(5)) * 1e-6 // ties, zeros
				default:
					vs[i] = (10 + rng.Float64()*3) * 1e-6
				}
			}
			want := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(vs), &benchmath.DefaultThresholds), Confidence)
			center, i := tl.summarise(slices.Clone(vs))
			got := tl.list[i]
			require.Equal(t, want.Center, center, "n=%d %v", n, vs)
			require.Equal(t, want.PctRangeString(), got.Range, "n=%d %v", n, vs)
			var ws []string
			for _, w := range want.Warnings {
				ws = append(ws, w.Error())
			}
			require.Equal(t, ws, got.Warnings, "n=%d", n)
		}
	}
}

// TestFastPathIsBenchfmt: the agents' pair files go through the fast
// path (not benchfmt's reader), and it reads them as benchfmt does.
// testdata/pairs is a copy of jobreport's recorded job's pair files: the
// VM has the package's own testdata only.
func TestFastPathIsBenchfmt(t *testing.T) {
	files, err := filepath.Glob(filepath.FromSlash("testdata/pairs/*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	p := NewPairParser()
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		var f PairFile
		var src, dst string
		for _, v := range []bool{false, true} {
			require.True(t, p.fast(data, "", "", v, &f), "%s: the fast path refused an agent's file", name)
			src, dst = f.runs[0].src, f.runs[0].dst
		}
		checkFastPath(t, string(data), src, dst)
		checkFastPath(t, string(data), "", "")
	}
	// Forms the fast path leaves to benchfmt, which still reads them.
	for _, in := range []string{
		"BenchmarkX/src=a/dst=b-4 10 1e3 ns/op\n", // an exponent
		"BenchmarkX/src=a/dst=b-4 10 5 ns/op\r\n", // a carriage return
		"Unit ns/op assume=exact\nBenchmarkX/src=a/dst=b-4 10 5 ns/op\n",
		"BenchmarkX/src=a/dst=b-4 10 0.1234567890123456 ns/op\n", // 16 digits
	} {
		var f PairFile
		assert.False(t, p.fast([]byte(in), "a", "b", true, &f), "%q", in)
		r := NewResults()
		assert.NoError(t, r.ReadPair(strings.NewReader(in), "f", "a", "b"), "%q", in)
	}
}
