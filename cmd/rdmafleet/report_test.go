package main

import (
	"bytes"
	"flag"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/fleet"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// copyDir copies testdata/job into a temporary directory.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "job")
	require.NoError(t, os.CopyFS(to, os.DirFS(from)))
	return to
}

// TestReportGolden: recorded pair files of 4 nodes (n4 ~100 us slower, as
// with a netem delay of 50 us each way on its NIC; one retest failed) give
// the matrix and verdict in the golden files, and a heat map.
func TestReportGolden(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, runReport([]string{"-dir", dir}, &stdout, &stderr), stderr.String())
	for _, name := range []string{"matrix.txt", "outliers.txt"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		golden := filepath.Join("testdata", strings.TrimSuffix(name, ".txt")+".golden")
		if *update {
			require.NoError(t, os.WriteFile(golden, got, 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s (go test -update rewrites %s)", name, golden)
	}
	assert.Equal(t, readJobFile(t, dir, "outliers.txt"), stdout.String())
	f, err := os.Open(filepath.Join(dir, "heatmap.png"))
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)
	assert.Contains(t, readJobFile(t, dir, "heatmap.svg"), ">n4<")

	// The heat map shows each pair both ways, in microseconds.
	c, err := collect(dir, reportOptions{metric: "p50-sec"})
	require.NoError(t, err)
	grid := heatGrid(c.results, c.bench, "p50-sec", c.plan.Nodes)
	assert.InDelta(t, 112.31, grid[0][3], 0.01, "n1 -> n4, measured")
	assert.Equal(t, grid[0][3], grid[3][0], "n4 -> n1, mirrored")
	assert.True(t, math.IsNaN(grid[2][2]))

	// Judged on another size and metric.
	stdout.Reset()
	require.Equal(t, 0, runReport([]string{"-dir", dir, "-judge", "RDMAWrite/size=4096", "-metric", "p99-sec"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "judged on: RDMAWrite/size=4096 p99-sec")
	assert.Contains(t, stdout.String(), "node n4: in 3 of its 3 pairs")
}

func TestReportMissingPair(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	require.NoError(t, os.Remove(filepath.Join(dir, "pairs", "round02-n4-n2.txt")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "retest")))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, runReport([]string{"-dir", dir}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "failed: round 2 n4 n2: no result and no failure file (still running, or the job was stopped)\n")
	assert.NotContains(t, stdout.String(), "retest")

	assert.Equal(t, 1, runReport([]string{"-dir", t.TempDir()}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "not a directory of rdmafleet run?")
	assert.Equal(t, 2, runReport([]string{"-dir", dir, "-min-ratio", "0.5"}, &stdout, &stderr))
}

func TestRewriteResults(t *testing.T) {
	out := []byte(`goos: linux
goarch: amd64
pkg: github.com/rdmabench/rdmabench
cpu: Intel(R) Xeon(R)
rdmabench-mode: two-node
rdma-device: mlx5_0
rdma-fw: 28.39.1002
BenchmarkRDMAWrite/size=2-8   	   1000	      1543 ns/op	      1490 p50-ns	     0 B/op
    twonode.go:12: a log line
BenchmarkRDMAWrite/size=4096-8	   1000	      2911 ns/op	      2890 p50-ns	     0 B/op
PASS
`)
	step := fleet.Step{Pair: fleet.Pair{Src: "nodeA", Dst: "nodeB"}, Round: 2, Index: 3}
	plan := &fleet.Plan{Pattern: "sample:2", Nodes: []string{"nodeA", "nodeB", "nodeC"}}
	cfg := runConfig(plan, func(k string) string { return map[string]string{"RDMABENCH_DEVICE": "mlx5_0", "SLURM_JOB_ID": "99"}[k] })
	got, err := rewriteResults(out, "x", step, cfg)
	require.NoError(t, err)
	assert.Equal(t, `goos: linux
goarch: amd64
pkg: github.com/rdmabench/rdmabench
rdmabench-mode: fleet
rdma-device: mlx5_0
rdmabench-fleet-pattern: sample:2
rdmabench-fleet-nodes: 3
slurm-job-id: 99

BenchmarkRDMAWrite/src=nodeA/dst=nodeB/size=2-8 1000 1543 ns/op 1490 p50-ns 0 B/op
BenchmarkRDMAWrite/src=nodeA/dst=nodeB/size=4096-8 1000 2911 ns/op 2890 p50-ns 0 B/op
`, string(got))
	assert.Equal(t, "round02-nodeA-nodeB", pairBase(step))

	_, err = rewriteResults([]byte("--- FAIL: BenchmarkRDMAWrite\n    no device\nFAIL\n"), "x", step, cfg)
	assert.ErrorContains(t, err, "no benchmark results in the output; output ends: --- FAIL: BenchmarkRDMAWrite |     no device | FAIL")
}

func readJobFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}
