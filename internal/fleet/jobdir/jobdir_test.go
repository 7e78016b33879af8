package jobdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
