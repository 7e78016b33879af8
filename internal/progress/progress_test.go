package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpected(t *testing.T) {
	list := []string{"BenchmarkRDMAWrite", "BenchmarkRDMARead", "BenchmarkRDMAAtomic", "TestX", "ok  \tpkg\t0.1s"}
	// 2 benchmarks x 3 sizes x 6 runs + atomics 2 ops x 6 runs.
	assert.Equal(t, 2*3*6+2*6, Expected(list, 3, 6))
}

// A fake clock that moves 10 s at every reading after the start.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { c.t = c.t.Add(10 * time.Second); return c.t }

func TestFilter(t *testing.T) {
	in := strings.Join([]string{
		"rdma-device: rxe0",
		"# warning (vm): running under a hypervisor",
		"BenchmarkRDMAWrite/size=2   \t 2000\t 15282 ns/op\t 11448 p50-ns",
		"BenchmarkRDMAWrite/size=2   \t 2000\t 15282 ns/op\t 11448 p50-ns",
		"--- BENCH: BenchmarkRDMAWrite/size=2",
		"BenchmarkRDMAWrite/size=64  \t 2000\t 15282 ns/op\t 11448 p50-ns",
		"--- FAIL: BenchmarkRDMARead",
		"BenchmarkRDMAWrite/size=64  \t 2000\t 15282 ns/op\t 11448 p50-ns",
		"PASS",
	}, "\n") + "\n"
	var out, status strings.Builder
	clk := &fakeClock{}
	f := Filter{Total: 4, Count: 2, Status: &status, Now: clk.now}
	n, err := f.Run(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, in, out.String(), "the output passes through unchanged")
	// Clock readings: start 10 s, first result 20 s; each status line
	// reads it twice, for elapsed and for the pace. Second result:
	// elapsed 50-10 = 40 s, pace (60-20)/1 = 40 s a result, 2 to go.
	// Third: elapsed 70-10, pace (80-20)/2 = 30 s, 1 to go.
	assert.Equal(t, []string{
		"[1/4] RDMAWrite/size=2 run 1/2  elapsed 0:20  time left: estimating",
		"[2/4] RDMAWrite/size=2 run 2/2  elapsed 0:40  about 1:20 left",
		"[3/4] RDMAWrite/size=64 run 1/2  elapsed 1:00  about 0:30 left",
		"--- FAIL: BenchmarkRDMARead",
		"[4/4] RDMAWrite/size=64 run 2/2  elapsed 1:20  done",
	}, strings.Split(strings.TrimSpace(status.String()), "\n"))
}

func TestFilterTotalGrows(t *testing.T) {
	in := "BenchmarkA \t 10\t 5 ns/op\t 1 p50-ns\nBenchmarkB \t 10\t 5 ns/op\t 1 p50-ns\n"
	var out, status strings.Builder
	f := Filter{Total: 1, Status: &status, Now: (&fakeClock{}).now}
	_, err := f.Run(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.Contains(t, status.String(), "[2/2] B  elapsed")
}
