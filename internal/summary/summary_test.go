package summary

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// results writes six runs of a write benchmark at two sizes and six of a
// read, with inline differing between them, as the suite prints them.
const results = `rdma-device: rxe0
rdma-transport: rc
rdma-completion: poll
rdma-inline-max: 220
rdmabench-cpus: 2-3
# warning (vm): running under a hypervisor (qemu)
#   fix: compare only results taken in one boot
# warning (cpu-idle): no cpuidle driver
BenchmarkRDMAWrite/size=2 	2000	15000 ns/op	1000 min-ns	3000 p50-ns	2.000 stalls
BenchmarkRDMAWrite/size=2 	2000	15000 ns/op	2000 min-ns	3000 p50-ns	0 stalls
BenchmarkRDMAWrite/size=2 	2000	15000 ns/op	3000 min-ns	3000 p50-ns	1.000 stalls
BenchmarkRDMAWrite/size=2 	2000	15000 ns/op	4000 min-ns	3000 p50-ns	5.000 stalls
BenchmarkRDMAWrite/size=2 	2000	15000 ns/op	5000 min-ns	3000 p50-ns	3.000 stalls
BenchmarkRDMAWrite/size=2 	2000	15000 ns/op	6000 min-ns	3000 p50-ns	4.000 stalls
--- BENCH: BenchmarkRDMAWrite/size=2
    bench.go:92: p99.99 needs at least 10000 samples
BenchmarkRDMAWrite/size=4096 	2000	80000 ns/op	66000 min-ns	68000 p50-ns	1.000 stalls
rdma-inline-max: 0
# warning (vm): running under a hypervisor (qemu)
BenchmarkRDMARead/size=2 	2000	30000 ns/op	19000 min-ns	29000 p50-ns	4.000 stalls
`

func TestSummarize(t *testing.T) {
	f, err := Read(strings.NewReader(results), "results.txt")
	require.NoError(t, err)
	assert.Equal(t, []string{"vm", "cpu-idle"}, f.Warnings, "each warning once, in order")
	require.Len(t, f.Runs, 8)
	assert.Equal(t, "RDMAWrite/size=2", f.Runs[0].Name)
	assert.InDelta(t, 1e-6, f.Runs[0].Values["min-sec"], 1e-15, "units tidied to seconds")

	tab := Summarize(f, DefaultOptions)
	assert.Equal(t, [][2]string{{"device", "rxe0"}, {"transport", "rc"}, {"completion", "poll"}, {"cpus", "2-3"}}, tab.Common)
	assert.Equal(t, []string{"rdma-inline-max"}, tab.Varying)
	require.Len(t, tab.Rows, 3)
	w := tab.Rows[0]
	assert.Equal(t, "RDMAWrite", w.Base)
	assert.Equal(t, 2, w.Size)
	assert.Equal(t, 6, w.Runs)
	assert.Equal(t, []int{2000}, w.Iters)
	// Six runs, min 1..6 us: the median is 3.5 us; at 95% the
	// distribution-free interval of 6 values is their range, 1 to 6 us,
	// so ± max(6/3.5-1, 1-1/3.5) = 71%.
	s := w.Cells["min-sec"]
	assert.InDelta(t, 3.5e-6, s.Center, 1e-15)
	assert.InDelta(t, 1e-6, s.Lo, 1e-15)
	assert.InDelta(t, 6e-6, s.Hi, 1e-15)
	assert.Equal(t, "71%", s.PctRangeString())
	// Stalls 0..5: median 2.5, interval 0 to 5.
	assert.Equal(t, "2.5 (0–5)", formatCell(Metrics[6], w.Cells["stalls"]))
	_, ok := w.Cells["p99-sec"]
	assert.False(t, ok, "a unit no run reports has no cell")
	assert.Equal(t, "RDMAWrite", tab.Rows[1].Base)
	assert.Equal(t, 4096, tab.Rows[1].Size)
	assert.Equal(t, "RDMARead", tab.Rows[2].Base, "benchmarks in the order they ran")
	assert.Equal(t, "0", tab.Rows[2].Config["rdma-inline-max"])
}

func TestSplitSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		base string
		size int
	}{
		{"RDMAWrite/size=2", "RDMAWrite", 2},
		{"RDMAAtomic/op=fetch_add/size=8", "RDMAAtomic/op=fetch_add", 8},
		{"RDMAWrite", "RDMAWrite", 0},
		{"RDMAWrite/size=big", "RDMAWrite/size=big", 0},
	} {
		base, size := splitSize(c.in)
		assert.Equal(t, c.base, base, c.in)
		assert.Equal(t, c.size, size, c.in)
	}
}

func TestReadErrors(t *testing.T) {
	_, err := Read(strings.NewReader("PASS\nok  \tpkg\t1s\n"), "empty.txt")
	assert.ErrorContains(t, err, "empty.txt: no benchmark results")
	_, err = ReadFile("testdata/does-not-exist.txt")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestFormatMicros(t *testing.T) {
	assert.Equal(t, []string{"0.812", "11.34", "68.22", "1121", "16548"},
		[]string{FormatMicros(0.8123), FormatMicros(11.344), FormatMicros(68.221), FormatMicros(1121.4), FormatMicros(16547.8)})
}

// TestGolden checks the printed summary of a real make bench results
// file (testdata/bench.txt) against testdata/summary.golden; go test
// -update rewrites the golden file after a deliberate change.
func TestGolden(t *testing.T) {
	f, err := ReadFile("testdata/bench.txt")
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, Summarize(f, DefaultOptions).Format(&b))
	if *update {
		require.NoError(t, os.WriteFile("testdata/summary.golden", []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile("testdata/summary.golden")
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String())
}
