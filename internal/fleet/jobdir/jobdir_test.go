package jobdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/internal/fleet"
)

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
	cfg := RunConfig(plan, func(k string) string { return map[string]string{"RDMABENCH_DEVICE": "mlx5_0", "SLURM_JOB_ID": "99"}[k] })
	got, err := RewriteResults(out, "x", step, cfg)
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
	assert.Equal(t, "round02-nodeA-nodeB", PairBase(step))

	_, err = RewriteResults([]byte("--- FAIL: BenchmarkRDMAWrite\n    no device\nFAIL\n"), "x", step, cfg)
	assert.ErrorContains(t, err, "no benchmark results in the output; output ends: --- FAIL: BenchmarkRDMAWrite |     no device | FAIL")
}

// Under RDMABENCH_LOAD every pair file says so in the job's lines (the
// benchmark's own rdmabench-load line is dropped with its other lines),
// and the stream's load-MB/s stays on each result beside the latency.
func TestRunConfigUnderLoad(t *testing.T) {
	plan := &fleet.Plan{Pattern: "all-pairs", Nodes: []string{"n1", "n2"}}
	vars := map[string]string{"RDMABENCH_LOAD": "64K"}
	cfg := RunConfig(plan, func(k string) string { return vars[k] })
	assert.Contains(t, cfg, [2]string{"rdmabench-load", "65536"})
	out := []byte("rdmabench-load: 65536\nBenchmarkRDMAWrite/size=2-8 200 90000 ns/op 81000 p50-ns 37.5 load-MB/s\n")
	got, err := RewriteResults(out, "x", fleet.Step{Pair: fleet.Pair{Src: "n1", Dst: "n2"}, Round: 1}, cfg)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(got), "rdmabench-load: 65536\n"), "%s", got)
	assert.Contains(t, string(got), "BenchmarkRDMAWrite/src=n1/dst=n2/size=2-8 200 90000 ns/op 81000 p50-ns 37.5 load-MB/s\n")

	for v, want := range map[string]int{"": 0, "0": 0, "4096": 4096, "8M": 8 << 20} {
		vars["RDMABENCH_LOAD"] = v
		n, err := LoadSize(func(k string) string { return vars[k] })
		require.NoError(t, err, v)
		assert.Equal(t, want, n, v)
	}
	vars["RDMABENCH_LOAD"] = ""
	assert.NotContains(t, fmt.Sprint(RunConfig(plan, func(k string) string { return vars[k] })), "rdmabench-load", "no line without a load")
	for _, bad := range []string{"16M", "-1", "lots"} {
		vars["RDMABENCH_LOAD"] = bad
		_, err := LoadSize(func(k string) string { return vars[k] })
		assert.ErrorContains(t, err, "RDMABENCH_LOAD", bad)
		assert.NotContains(t, fmt.Sprint(RunConfig(plan, func(k string) string { return vars[k] })), "rdmabench-load", bad)
	}
}

// The job directory's files are readable by all, on a shared file system,
// and a failure is recorded once its reason is on one line, never over a
// result.
func TestWriteAtomicAndFailures(t *testing.T) {
	dir := t.TempDir()
	s := fleet.Step{Pair: fleet.Pair{Src: "n1", Dst: "n2"}, Round: 1}
	require.NoError(t, RecordFailed(dir, s, "rdmapeer exited\n  before\tlistening"))
	fi, err := os.Stat(FailedPath(dir, s))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "failure files")
	why, err := ReadFailed(t.Context(), FailedPath(dir, s))
	require.NoError(t, err)
	assert.Equal(t, "rdmapeer exited before listening", why)

	require.NoError(t, WriteAtomic(ResultPath(dir, s), []byte("x")))
	fi, err = os.Stat(ResultPath(dir, s))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "pair files")
	s.Round = 2
	require.NoError(t, WriteAtomic(ResultPath(dir, s), []byte("x")))
	require.NoError(t, RecordFailed(dir, s, "late"))
	assert.NoFileExists(t, FailedPath(dir, s), "a result is there: no failure over it")
	left, err := filepath.Glob(filepath.Join(dir, PairsDir, ".*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary files left")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.failed"), []byte("garbage\n"), 0o644))
	_, err = ReadFailed(t.Context(), filepath.Join(dir, "bad.failed"))
	assert.ErrorContains(t, err, `no "reason:" line`)
}

// TestRewriteResultsRails: a benchmark over rails keeps each rail in its
// results' names, after the pair, so that the report's tables split by
// rail: node A's rail i measured against node B's rail i.
func TestRewriteResultsRails(t *testing.T) {
	out := []byte("rdmabench-mode: two-node\nrdma-device: mlx5_0\nrdma-peer-device: mlx5_0\n" +
		"BenchmarkRDMAWrite/rail=mlx5_0/size=2-8 1000 1543 ns/op 1490 p50-ns\n" +
		"rdma-device: mlx5_1\nrdma-peer-device: mlx5_1\n" +
		"BenchmarkRDMAWrite/rail=mlx5_1/size=2-8 1000 1643 ns/op 1590 p50-ns\n")
	step := fleet.Step{Pair: fleet.Pair{Src: "a", Dst: "b"}, Round: 1}
	plan := &fleet.Plan{Pattern: "all-pairs", Nodes: []string{"a", "b"}}
	got, err := RewriteResults(out, "x", step, RunConfig(plan, func(k string) string { return map[string]string{"RDMABENCH_DEVICE": "mlx5_0,mlx5_1"}[k] }))
	require.NoError(t, err)
	assert.Contains(t, string(got), "rdma-device: mlx5_0,mlx5_1\n")
	assert.Contains(t, string(got), "BenchmarkRDMAWrite/src=a/dst=b/rail=mlx5_0/size=2-8 1000 1543 ns/op 1490 p50-ns\n")
	assert.Contains(t, string(got), "BenchmarkRDMAWrite/src=a/dst=b/rail=mlx5_1/size=2-8 1000 1643 ns/op 1590 p50-ns\n")
	for rail, want := range map[string]string{"mlx5_0": "RDMAWrite/rail=mlx5_0/size=2", "mlx5_1": "RDMAWrite/rail=mlx5_1/size=2"} {
		bench, src, dst, err := fleet.SplitPairName(benchfmt.Name("RDMAWrite/src=a/dst=b/rail=" + rail + "/size=2-8"))
		require.NoError(t, err)
		assert.Equal(t, [3]string{want, "a", "b"}, [3]string{bench, src, dst}, "the report's table of rail %s", rail)
	}
}
