package jobreport

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadJob writes a job of three nodes under RDMABENCH_LOAD=64K into a new
// directory: each pair 6 results at 2 B with a p50 of p50ns[pair] and a
// load-MB/s of mbps[pair]+i/10 in run i (i = 0..5, so the median is
// mbps+0.25).
func loadJob(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "job")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pairs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.txt"), []byte(
		"# pattern: all-pairs\n# nodes: n1 n2 n3\n1 n1 n2\n2 n1 n3\n3 n2 n3\n"), 0o644))
	pairs := []struct {
		round    int
		src, dst string
		p50ns    int
		mbps     float64
	}{{1, "n1", "n2", 80000, 40}, {2, "n1", "n3", 90000, 12}, {3, "n2", "n3", 85000, 38}}
	for _, p := range pairs {
		var b strings.Builder
		b.WriteString("rdmabench-mode: fleet\nrdma-device: rxe0\nrdmabench-fleet-pattern: all-pairs\nrdmabench-fleet-nodes: 3\nslurm-job-id: 5\nrdmabench-load: 65536\n")
		for i := range 6 {
			fmt.Fprintf(&b, "BenchmarkRDMAWrite/src=%s/dst=%s/size=2-4 200 %d ns/op %d p50-ns %d p99-ns %.2f load-MB/s\n",
				p.src, p.dst, p.p50ns+100, p.p50ns+i, 2*p.p50ns, p.mbps+float64(i)/10)
		}
		name := fmt.Sprintf("round%02d-%s-%s.txt", p.round, p.src, p.dst)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "pairs", name), []byte(b.String()), 0o644))
	}
	return dir
}

// A job under load: the matrix shows the stream's throughput in a table
// of its own beside the latency; outliers.txt says the job ran under load
// and what the streams carried; the pairs are judged on the latency
// alone, and -max holds the latency cells alone.
func TestReportUnderLoad(t *testing.T) {
	dir := loadJob(t)
	o := DefaultOptions
	var err error
	o.Limits, err = ParseLimits("p50=85us")
	require.NoError(t, err)
	var stdout bytes.Buffer
	err = Write(t.Context(), dir, o, &stdout)
	require.ErrorIs(t, err, ErrOverLimits)

	matrix := readJobFile(t, dir, "matrix.txt")
	assert.Contains(t, matrix, "rdmabench-load: 65536\n", "the job's load line heads the matrix")
	// Medians: n1 n2 40.25 MB/s, n1 n3 12.25, n2 n3 38.25, shown as
	// bytes a second (benchstat's tidied unit), scaled to M.
	assert.Regexp(t, `RDMAWrite/size=2\s+│\s+dst=n2\s+│\s+dst=n3\s+│\nsrc\s+│\s+load-B/s\s+│\s+load-B/s\s+│\nn1\s+40\.25M ± \S+\s+12\.25M ± \S+\s*\nn2\s+38\.25M ± \S+`, matrix)
	assert.Contains(t, matrix, "p50-sec", "the latency tables are still there")

	out := stdout.String()
	assert.Equal(t, readJobFile(t, dir, "outliers.txt"), out)
	assert.Contains(t, out, "judged on: RDMAWrite/size=2 p50-sec, 3 nodes, plan all-pairs\n"+
		"under load: 65536-byte RDMA WRITEs streamed on each pair's device beside its latency (RDMABENCH_LOAD, rdmabench-load 65536); "+
		"load-MB/s median 38.25 over 3 pairs, lowest 12.25 (n1 n3); not judged, each pair's in matrix.txt\n")
	// p50 medians 80002.5, 90002.5, 85002.5 ns (printed to the ns): two
	// over 85 us; 3 cells
	// judged, one per pair: the load is not a cell of -max.
	assert.Contains(t, out, "over limit: round 2 n1 n3 RDMAWrite/size=2 p50 90.002µs > 85µs\n")
	assert.Contains(t, out, "cells over the limits: 2 of 3\n")

	// Without the load line, no word of load.
	plain := copyDir(t, "testdata/job")
	stdout.Reset()
	require.NoError(t, Write(t.Context(), plain, DefaultOptions, &stdout))
	assert.NotContains(t, stdout.String(), "under load")
	assert.NotContains(t, readJobFile(t, plain, "matrix.txt"), "load-B/s")
}

// The rules flag pairs slower than the fastest: a throughput, or any
// figure that is not a time, is refused as the metric to judge.
func TestMetricMustBeATime(t *testing.T) {
	for _, m := range []string{"load-MB/s", "load-B/s"} {
		o := DefaultOptions
		o.Metric = m
		assert.ErrorContains(t, o.Check(), "-metric "+m+": the load stream's throughput (RDMABENCH_LOAD) is shown in matrix.txt beside the latency but never judged; judge a time")
	}
	for _, m := range []string{"B/op", "allocs/op", "stalls"} {
		o := DefaultOptions
		o.Metric = m
		assert.ErrorContains(t, o.Check(), "-metric "+m+": not a time")
	}
	for _, m := range []string{"p50-sec", "p99-sec", "min-sec", "sec/op", "max-sec"} {
		o := DefaultOptions
		o.Metric = m
		assert.NoError(t, o.Check(), m)
	}
}
