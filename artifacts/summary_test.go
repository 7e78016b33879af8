package artifacts

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/summary.golden")

// TestSummaryGolden pins summary.json: its field names, its percentile
// names and which of them a count has, the stall count, exact figures
// from samples and histogram figures without; every size in one file.
func TestSummaryGolden(t *testing.T) {
	dir := t.TempDir()
	s := Summary{Benchmark: "BenchmarkRDMAWrite", OneWay: true, Config: map[string]string{"rdma-device": "rxe0", "rdmabench-mode": "loopback"}}
	for i, n := range []int{1, 99, 1000, 10000} {
		raw := samples(n, min(n/100, 3))
		run := Run{Name: "BenchmarkRDMAWrite/size=" + strconv.Itoa(2<<i), Size: 2 << i, Hist: FromSamples(raw)}
		if i%2 == 0 {
			run.Samples = raw // exact min, max, mean, stddev, stalls
		}
		res, err := Write(t.TempDir(), run)
		require.NoError(t, err)
		res.Dir = "/rxevm/out/_artifacts/" + strconv.Itoa(i+1)
		s.Results = append(s.Results, res)
	}
	path, err := WriteSummary(dir, s)
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	golden := filepath.Join("testdata", "summary.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "go test -update rewrites %s", golden)
}
