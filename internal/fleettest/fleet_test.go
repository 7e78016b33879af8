package fleettest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outDir is the directory shared with the VMs: $RDMABENCH_FLEET_OUT/name
// when set (an absolute path; make test-fleet keeps the job directories
// there), else a temporary one.
func outDir(t *testing.T, name string) string {
	base := os.Getenv("RDMABENCH_FLEET_OUT")
	if base == "" {
		return t.TempDir()
	}
	dir, err := filepath.Abs(filepath.Join(base, name))
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// mustHaveBed skips unless RDMABENCH_FLEET_TEST=1, and then requires the
// host tools the VMs need.
func mustHaveBed(t *testing.T) {
	t.Helper()
	if os.Getenv("RDMABENCH_FLEET_TEST") != "1" {
		t.Skip("skipping: boots several VMs for minutes; set RDMABENCH_FLEET_TEST=1 (make test-fleet) to run")
	}
	for _, tool := range []string{"qemu-system-x86_64", "busybox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("RDMABENCH_FLEET_TEST=1 but %s is missing (make deps): %v", tool, err)
		}
	}
}

// moduleRoot is the repository root (this package is internal/fleettest).
func moduleRoot(t *testing.T) string {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	return root
}

// buildBinaries builds rxevm, rdmafleet, rdmapeer and the root benchmark
// binary into a new directory, which every node gets at the same path.
func buildBinaries(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	bin := filepath.Join(t.TempDir(), "bin")
	for _, args := range [][]string{
		{"build", "-o", filepath.Join(bin, "rxevm"), "./cmd/rxevm"},
		{"build", "-o", filepath.Join(bin, "rdmafleet"), "./cmd/rdmafleet"},
		{"build", "-o", filepath.Join(bin, "rdmapeer"), "./cmd/rdmapeer"},
		{"test", "-c", "-o", filepath.Join(bin, "rdmabench.test"), "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	}
	return bin
}

// runBed runs bin/rxevm with args and returns its standard output; its
// progress lines go to the test log.
func runBed(t *testing.T, bin string, timeout time.Duration, args ...string) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	logFile := filepath.Join(t.TempDir(), "rxevm.log")
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "rxevm"), append([]string{"-log", logFile}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	progress, _ := os.ReadFile(logFile)
	t.Logf("rxevm took %s; progress:\n%s", took.Round(time.Second), progress)
	t.Logf("output:\n%s", stdout.String())
	require.NoError(t, err, "rxevm %s\nstderr:\n%s", strings.Join(args, " "), stderr.String())
	return stdout.String(), took
}

// p50 finds the p50-ns value of the result line of the named benchmark size.
func p50(t *testing.T, out, size string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^BenchmarkRDMAWrite/size=` + size + `\S*\s.*?\s([0-9.]+) p50-ns`)
	var vals []float64
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		vals = append(vals, v)
	}
	require.NotEmpty(t, vals, "no p50-ns result for size=%s", size)
	return median(vals)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s { // insertion sort: a handful of values
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestTwoKernels runs BenchmarkRDMAWrite in two-node mode between two VMs:
// rdmapeer on node2's rxe0, the benchmark on node1's rxe0, the round trips
// crossing both kernels and the host-side segment between their NICs.
func TestTwoKernels(t *testing.T) {
	mustHaveBed(t)
	bin := buildBinaries(t)
	out := outDir(t, "twonode")
	script := filepath.Join(t.TempDir(), "twonode.sh")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
# node1: wait for node2's rdmapeer, then run the benchmark against it.
end=$(($(date +%s) + 120))
until grep -q listening $RXEVM_OUT/peer.log 2>/dev/null; do
	[ $(date +%s) -gt $end ] && { echo "rdmapeer on node2 did not start"; cat $RXEVM_OUT/peer.log; exit 1; }
	sleep 0.5
done
exec "$@"
`), 0o755))
	stdout, took := runBed(t, bin, 20*time.Minute,
		"-nodes", "2", "-out", out, "-include", bin,
		"-node-cmd", filepath.Join(bin, "rdmapeer")+" >$RXEVM_OUT/peer.log 2>&1",
		"-env", "RDMABENCH_PEER=node2:18515", "-env", "RDMABENCH_SIZES=2,4096", "-env", "RDMABENCH_WARMUP=200",
		script, filepath.Join(bin, "rdmabench.test"),
		"-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$", "-test.benchtime=1000x", "-test.count=5")
	peerLog, _ := os.ReadFile(filepath.Join(out, "peer.log"))
	t.Logf("rdmapeer on node2:\n%s", peerLog)
	assert.Contains(t, stdout, "rdmabench-mode: two-node")
	assert.Contains(t, string(peerLog), "listening")
	t.Logf("two kernels, one-way p50 (median of 5): 2 B %.0f ns, 4 KiB %.0f ns; whole run %s",
		p50(t, stdout, "2"), p50(t, stdout, "4096"), took.Round(time.Second))
}

// TestFleetOnSlurm boots four VMs with Slurm, node3's NIC delayed by
// netem, and runs fleet mode twice through sbatch: every pair (the matrix
// has all 6 pairs and names node3 as the outlier), then one round in which
// node4's agent is killed (its pair fails within the pair's deadline, the
// other pair of the round still reports), and once more for one pair under
// RDMABENCH_LOAD (checkLoadJob).
//
// The outlier is judged on min-sec with a 3x ratio, not p50 at 2.1x: on
// this bed (2 emulated cores shared with other VMs) pairs without a delay
// measured a median p50 of 0.56-3.0 ms in one job, so three of them
// passed 2.1x the fastest, while their min stayed at 0.29-0.98 ms and the
// pairs of a node delayed by 5 ms had a min of 2.85-3.84 ms. The delay
// adds a fixed 2.5 ms to a one-way min, so its ratio to the fastest pair
// falls as the bed slows (below 5x in a slow bed, so a 5x limit can miss
// it). 3x keeps a margin
// on both sides: undelayed pairs spread up to 2.3x of the fastest. (A
// 10 ms delay made node3's pairs pass the 2-minute deadline.)
func TestFleetOnSlurm(t *testing.T) {
	mustHaveBed(t)
	bin := buildBinaries(t)
	root := moduleRoot(t)
	sbatch := filepath.Join(root, "cmd", "rdmafleet", "rdmafleet.sbatch")
	out := outDir(t, "slurm")
	const pairTimeout = 2 * time.Minute
	stdout, took := runBed(t, bin, 40*time.Minute,
		"-nodes", "4", "-slurm", "-netem", "node3=delay 5ms", "-out", out,
		"-include", bin, "-include", sbatch,
		"-env", "RDMABENCH_SIZES=2,4096", "-env", "RDMABENCH_WARMUP=100",
		"testdata/fleet.sh", bin, sbatch,
		"-count", "3", "-benchtime", "200x", "-timeout", pairTimeout.String(),
		"-metric", "min-sec", "-min-ratio", "3")
	t.Logf("whole test bed run: %s", took.Round(time.Second))

	host, _ := os.ReadFile(filepath.Join(out, "hostnames.txt"))
	assert.Equal(t, "node1\nnode2\nnode3\nnode4\n", string(host), "srun -N4 hostname")
	assert.Contains(t, stdout, "node1: node1-node4 resolve and answer")
	assert.Contains(t, stdout, "node4: node1-node4 resolve and answer")

	// Job 1: the matrix and the outlier.
	all := filepath.Join(out, "all")
	matrix, err := os.ReadFile(filepath.Join(all, "matrix.txt"))
	require.NoError(t, err, "job 1 wrote no matrix.txt")
	t.Logf("matrix.txt:\n%s", matrix)
	pairs, _ := filepath.Glob(filepath.Join(all, "pairs", "round*.txt"))
	failed, _ := filepath.Glob(filepath.Join(all, "pairs", "round*.failed"))
	assert.Len(t, pairs, 6, "job 1: measured pairs (failed: %q)", failed)
	outliers, err := os.ReadFile(filepath.Join(all, "outliers.txt"))
	require.NoError(t, err)
	t.Logf("outliers.txt:\n%s", outliers)
	assert.Regexp(t, `(?m)^node node3: `, string(outliers), "node3, delayed by netem, is not named")
	for _, n := range []string{"node1", "node2", "node4"} {
		assert.NotRegexp(t, `(?m)^node `+n+`: `, string(outliers), "%s is named but has no delay", n)
	}
	rounds, _ := os.ReadFile(filepath.Join(all, "rounds.txt"))
	t.Logf("rounds.txt (job 1):\n%s", rounds)
	for _, f := range []string{"heatmap.png", "heatmap.svg"} {
		_, err := os.Stat(filepath.Join(all, f))
		assert.NoError(t, err)
	}

	// Job 2: the killed agent.
	kill := filepath.Join(out, "kill")
	assert.Contains(t, stdout, "killed the agent on node4")
	dead := filepath.Join(kill, "pairs", "round01-node3-node4.failed")
	reason, err := os.ReadFile(dead)
	if assert.NoError(t, err, "the killed agent's pair has no .failed file") {
		t.Logf("%s:\n%s", filepath.Base(dead), reason)
		// Measured in the guest, on one clock: kill to .failed file.
		b, err := os.ReadFile(filepath.Join(out, "kill-failed-after"))
		if assert.NoError(t, err) {
			s, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			after := time.Duration(s) * time.Second
			t.Logf("pair recorded failed %s after the kill (deadline %s)", after, pairTimeout)
			assert.Less(t, after, pairTimeout, "the failed pair took longer than its deadline")
		}
	}
	_, err = os.Stat(filepath.Join(kill, "pairs", "round01-node1-node2.txt"))
	assert.NoError(t, err, "the other pair of the round did not report")
	rounds, _ = os.ReadFile(filepath.Join(kill, "rounds.txt"))
	t.Logf("rounds.txt (job 2):\n%s", rounds)

	checkLoadJob(t, out, filepath.Join(all, "pairs", "round01-node1-node2.txt"))
}

// checkLoadJob checks job 3 of fleet.sh: node1 against node2 under
// RDMABENCH_LOAD=64K, set only in the environment of sbatch. The pair's
// results carry the stream's load-MB/s and the job's rdmabench-load line,
// node2's rdmapeer served the stream a session of its own, and the report
// and the plan's header say the job ran under load. idle is job 1's
// result of the same pair, without load, logged beside it.
func checkLoadJob(t *testing.T, out, idle string) {
	t.Helper()
	load := filepath.Join(out, "load")
	header, err := os.ReadFile(filepath.Join(out, "load-plan-header.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(header), "# load: each pair's latency is measured under load (RDMABENCH_LOAD=64K)")
	pair := filepath.Join(load, "pairs", "round01-node1-node2")
	if why, err := os.ReadFile(pair + ".failed"); err == nil {
		t.Logf("job 3's pair failed: %s", why)
	}
	res, err := os.ReadFile(pair + ".txt")
	require.NoError(t, err, "job 3 (under load) has no result")
	t.Logf("job 3's pair file:\n%s", res)
	assert.Equal(t, 1, strings.Count(string(res), "rdmabench-load: 65536\n"), "the job's load line")
	// 3 repetitions of 2 sizes, each with the stream's throughput.
	re := regexp.MustCompile(`(?m)^BenchmarkRDMAWrite/src=node1/dst=node2/size=\d+\S*\s.*\s([0-9.e+]+) load-MB/s\b`)
	matches := re.FindAllStringSubmatch(string(res), -1)
	assert.Len(t, matches, 6, "results with load-MB/s")
	for _, m := range matches {
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.Greater(t, v, 0.0, "the stream wrote nothing during a run")
	}
	peerLog, _ := os.ReadFile(filepath.Join(load, "raw", "round01-node1-node2.peer.log"))
	t.Logf("node2's rdmapeer:\n%s", peerLog)
	assert.Regexp(t, `load-stream op=\S+ max-size=65536 runs=[1-9]\d* bytes=[1-9]`, string(peerLog), "rdmapeer served no load session")
	matrix, err := os.ReadFile(filepath.Join(load, "matrix.txt"))
	require.NoError(t, err)
	t.Logf("matrix.txt (job 3):\n%s", matrix)
	assert.Contains(t, string(matrix), "rdmabench-load: 65536\n")
	assert.Contains(t, string(matrix), "load-B/s")
	outliers, err := os.ReadFile(filepath.Join(load, "outliers.txt"))
	require.NoError(t, err)
	t.Logf("outliers.txt (job 3):\n%s", outliers)
	assert.Contains(t, string(outliers), "under load: 65536-byte RDMA WRITEs streamed on each pair's device beside its latency (RDMABENCH_LOAD, rdmabench-load 65536); load-MB/s median ")
	if idleRes, err := os.ReadFile(idle); err == nil {
		t.Logf("node1 -> node2 p50 at 2 B, median of 3: %.0f ns idle (job 1), %.0f ns under load (job 3)",
			pairP50(t, string(idleRes)), pairP50(t, string(res)))
	}
}

// pairP50 is the median p50-ns of the 2-byte results of a pair file.
func pairP50(t *testing.T, res string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^BenchmarkRDMAWrite/src=\S+/dst=\S+/size=2(?:-\d+)?\s.*?\s([0-9.e+]+) p50-ns`)
	var vals []float64
	for _, m := range re.FindAllStringSubmatch(res, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return 0
	}
	return median(vals)
}
