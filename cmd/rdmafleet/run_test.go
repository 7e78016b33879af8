//go:build linux

package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/fleet/fakenode"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fleetRun runs rdmafleet run over fake nodes n1..n<nodes>, all on
// 127.0.0.1, and returns the job directory, the exit status and stderr.
func fleetRun(t *testing.T, nodes int, env map[string]string, extra ...string) (string, int, string) {
	t.Helper()
	bin := fakenode.Bin(t)
	dir := filepath.Join(t.TempDir(), "job")
	hosts := filepath.Join(t.TempDir(), "hosts")
	var h strings.Builder
	for i := 1; i <= nodes; i++ {
		fmt.Fprintf(&h, "127.0.0.1 n%d\n", i)
	}
	require.NoError(t, os.WriteFile(hosts, []byte(h.String()), 0o644))
	t.Setenv("SLURM_JOB_ID", "4242")
	t.Setenv("RDMABENCH_DEVICE", "fake0") // the VM sets rxe0
	t.Setenv("SLURM_JOB_NODELIST", fmt.Sprintf("n[1-%d]", nodes))
	for k, v := range env {
		t.Setenv(k, v)
	}
	args := append([]string{
		"-dir", dir, "-srun", filepath.Join(bin, "srun"), "-agent", filepath.Join(bin, "rdmafleet"),
		"-bench", filepath.Join(bin, "rdmabench.test"), "-peer", filepath.Join(bin, "rdmapeer"),
		"-hosts", hosts, "-port-base", strconv.Itoa(fakenode.FreePortBase(t, 2*nodes*nodes)), "-count", "3",
	}, extra...)
	var stdout, stderr bytes.Buffer
	code := runDriver(context.Background(), args, os.Getenv, &stdout, &stderr)
	t.Logf("rdmafleet run %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return dir, code, stderr.String()
}

// TestRunFleet: four fake nodes, n4 slow in all its pairs; every pair is
// measured once, n4 is named, its three pairs are retested.
func TestRunFleet(t *testing.T) {
	dir, code, _ := fleetRun(t, 4, map[string]string{"FAKE_SLOW": "n4"})
	require.Equal(t, 0, code)
	pairs, err := filepath.Glob(filepath.Join(dir, jobdir.PairsDir, "*.txt"))
	require.NoError(t, err)
	assert.Len(t, pairs, 6, "all 6 pairs of 4 nodes")
	res := readJobFile(t, dir, "pairs/round01-n1-n4.txt")
	assert.Contains(t, res, "rdmabench-mode: fleet\nrdma-device: fake0\nrdmabench-fleet-pattern: all-pairs\nrdmabench-fleet-nodes: 4\nslurm-job-id: 4242\n")
	assert.Contains(t, res, "BenchmarkRDMAWrite/src=n1/dst=n4/size=2-4 1000 30054 ns/op")
	assert.NotContains(t, res, "kernel:", "per-node lines stay in raw/")
	assert.Contains(t, readJobFile(t, dir, "raw/round01-n1-n4.bench.out"), "kernel: fake-n1")
	assert.Contains(t, readJobFile(t, dir, "raw/round01-n1-n4.peer.log"), "rdmapeer: stopped", "rdmapeer was stopped with SIGINT")

	out := readJobFile(t, dir, "outliers.txt")
	assert.Contains(t, out, "judged on: RDMAWrite/size=2 p50-sec, 4 nodes, plan all-pairs\n")
	assert.Contains(t, out, "node n4: in 3 of its 3 pairs flagged or failed\n")
	assert.Contains(t, out, "confirmed: 3 of 3\n")
	assert.Equal(t, 3, strings.Count(out, "(rules min)"))
	rounds := readJobFile(t, dir, "rounds.txt")
	assert.Equal(t, 3, strings.Count(rounds, "2 pairs, 2 ok, 0 failed"), rounds)
	assert.Equal(t, 3, strings.Count(readJobFile(t, dir, "retest/rounds.txt"), "1 pairs, 1 ok"), "n4 is in all three: a round each")

	m := readJobFile(t, dir, "matrix.txt")
	assert.Contains(t, m, "RDMAWrite/size=2")
	assert.Contains(t, m, "p50-sec")
	for _, name := range []string{"heatmap.png", "heatmap.svg"} {
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(1000))
	}
}

// TestRunFleetFailures: a hung benchmark (round 1), a killed benchmark
// agent (round 2) and a killed rdmapeer agent (round 3) each fail their
// pair within the deadline; every other pair reports.
func TestRunFleetFailures(t *testing.T) {
	// Rounds of n1..n4: (n1 n4, n2 n3), (n3 n1, n4 n2), (n1 n2, n3 n4).
	start := time.Now()
	dir, code, _ := fleetRun(t, 4, map[string]string{
		"FAKE_HANG": "n1:n4", "FAKE_KILL_SRC": "n3:n1", "FAKE_KILL_DST": "n3:n4",
	}, "-timeout", "8s", "-retest=false") // long enough for a healthy fake pair on a loaded 2-CPU host (3 s was not, at load 40)
	elapsed := time.Since(start)
	require.Equal(t, 0, code, "the report is written")
	for _, ok := range []string{"round01-n2-n3", "round02-n4-n2", "round03-n1-n2"} {
		assert.FileExists(t, filepath.Join(dir, jobdir.PairsDir, ok+".txt"))
	}
	reasons := map[string]string{
		"round01-n1-n4": "the benchmark passed the pair's deadline (-timeout 8s) and was killed",
		"round02-n3-n1": "the agent on n3 went away in the middle of the pair (killed?)",
		"round03-n3-n4": "rdmapeer went away",
	}
	for base, want := range reasons {
		why, err := jobdir.ReadFailed(t.Context(), filepath.Join(dir, jobdir.PairsDir, base+".failed"))
		require.NoError(t, err, base)
		assert.Contains(t, why, want, base)
	}
	out := readJobFile(t, dir, "outliers.txt")
	assert.Contains(t, out, "pairs measured: 3, failed: 3\n")
	assert.Contains(t, out, "failed: round 1 n1 n4: the benchmark passed the pair's deadline")
	// n3 is in 2 of its 3 pairs failed, n1 and n4 in 2 of 3: all three named.
	assert.Contains(t, out, "node n3: in 2 of its 3 pairs flagged or failed\n")
	rounds := readJobFile(t, dir, "rounds.txt")
	assert.Contains(t, rounds, "round 1 of 3: 2 pairs, 1 ok, 1 failed")
	// The hung pair ends at its 8 s deadline; the killed ones at once.
	assert.Less(t, elapsed, 30*time.Second)
	t.Logf("three rounds with three failures took %v", elapsed.Round(time.Millisecond))
}

// TestRunBadInput: bad input fails before any step runs, exit 2.
func TestRunBadInput(t *testing.T) {
	bin := fakenode.Bin(t)
	planFile := filepath.Join(t.TempDir(), "pairs.txt")
	require.NoError(t, os.WriteFile(planFile, []byte("1 n1 n2\n1 n3 n9\n"), 0o644))
	common := []string{"-srun", filepath.Join(bin, "srun"), "-bench", filepath.Join(bin, "rdmabench.test"), "-peer", filepath.Join(bin, "rdmapeer")}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one node", []string{"-nodes", "n1"}, `1 node(s) ["n1"]: a latency matrix needs at least 2 (sbatch -N 2 or more)`},
		{"duplicate nodes", []string{"-nodes", "n[1-3],n2"}, "node n2 appears twice in the node list: list each node once"},
		{"unknown node in plan", []string{"-nodes", "n[1-4]", "-plan", planFile}, planFile + ":2: pair n3 n9: node n9 is not in the allocation (n1,n2,n3,n4)"},
		{"bad host list", []string{"-nodes", "n[1-4"}, `-nodes: host list "n[1-4": '[' not closed`},
		{"no allocation", nil, "no node list: run inside a Slurm allocation"},
		{"sample too big", []string{"-nodes", "n[1-4]", "-plan", "sample:9"}, "sample:9: want 1 to 3 rounds for 4 nodes"},
		{"no srun", []string{"-nodes", "n[1-4]", "-srun", "/nonexistent/srun"}, "-srun /nonexistent/srun"},
		{"bad rails", []string{"-nodes", "n[1-4]", "-rails", "mlx5_0,,mlx5_1"}, `-rails "mlx5_0,,mlx5_1": "" is not a device name; write the devices of a node separated by commas (-rails mlx5_0,mlx5_1), or all`},
		{"rail twice", []string{"-nodes", "n[1-4]", "-rails", "mlx5_0,mlx5_0"}, `-rails "mlx5_0,mlx5_0": mlx5_0 is named twice; name each rail once`},
		{"no benchmark", []string{"-nodes", "n[1-4]", "-bench", "/nonexistent/rdmabench.test"}, "-bench /nonexistent/rdmabench.test: no such file or directory (build it, or name it with -bench)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "job")
			var stdout, stderr bytes.Buffer
			getenv := func(string) string { return "" }
			code := runDriver(context.Background(), append(append([]string{"-dir", dir}, common...), tc.args...), getenv, &stdout, &stderr)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tc.want)
			assert.NoDirExists(t, dir, "nothing ran")
		})
	}
}

// TestAgentBadInput: an agent started wrongly says why and exits 2.
func TestAgentBadInput(t *testing.T) {
	bin := fakenode.Bin(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, jobdir.PlanFile), []byte("# pattern: all-pairs\n# nodes: n1 n2\n1 n1 n2\n"), 0o644))
	common := []string{"-bench", filepath.Join(bin, "rdmabench.test"), "-peer", filepath.Join(bin, "rdmapeer"), "-dir", dir}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no slurm", nil, []string{"-round", "1"}, "neither SLURMD_NODENAME nor SLURM_STEP_NODELIST and SLURM_PROCID are set"},
		{"bad procid", map[string]string{"SLURM_STEP_NODELIST": "n[1-2]", "SLURM_PROCID": "2"}, []string{"-round", "1"}, "SLURM_PROCID=\"2\": want a task number below 2"},
		{"no round", map[string]string{"SLURMD_NODENAME": "n1"}, nil, "want -dir JOBDIR -round N"},
		{"round past the plan", map[string]string{"SLURMD_NODENAME": "n1"}, []string{"-round", "2"}, "has 1 rounds"},
		{"no job token", map[string]string{"SLURMD_NODENAME": "n1"}, []string{"-round", "1"}, "RDMABENCH_FLEET_TOKEN is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := runAgent(context.Background(), append(common, tc.args...), func(k string) string { return tc.env[k] }, nil, &stderr)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tc.want)
		})
	}
	// A node the plan leaves out of a round sits it out.
	var stderr bytes.Buffer
	code := runAgent(context.Background(), append(common, "-round", "1", "-node", "n3"), func(string) string { return "" }, nil, &stderr)
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr.String(), "sits out this round")
}

// The job script, embedded: inside the VM only testdata is at hand.
//
//go:embed rdmafleet.sbatch
var sbatchScript []byte

// TestSbatchScript runs rdmafleet.sbatch as sbatch would on the first
// node, with the fake srun first on PATH: its flags reach rdmafleet run.
func TestSbatchScript(t *testing.T) {
	bin := fakenode.Bin(t)
	script := filepath.Join(t.TempDir(), "rdmafleet.sbatch")
	require.NoError(t, os.WriteFile(script, sbatchScript, 0o755))
	dir := filepath.Join(t.TempDir(), "job")
	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 a b c\n"), 0o644))
	cmd := exec.Command("sh", script, "-hosts", hosts, "-port-base", strconv.Itoa(fakenode.FreePortBase(t, 8)), "-count", "2", "-retest=false")
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=a,b,c",
		"RDMABENCH_FLEET_BIN="+bin, "RDMABENCH_FLEET_DIR="+dir)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "pairs measured: 3, failed: 0")
	assert.Contains(t, readJobFile(t, dir, "rounds.txt"), "round 3 of 3: 1 pairs, 1 ok", "3 nodes: a bye per round")
	assert.Contains(t, readJobFile(t, dir, "pairs/round01-b-c.txt"), "slurm-job-id: 77\n")
}

func readJobFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}

// TestReportCommand: rdmafleet report's exit statuses (the report itself
// is jobreport's, and TestRunFleet's).
func TestReportCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, runReport(t.Context(), []string{"-dir", t.TempDir()}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "not a directory of rdmafleet run?")
	assert.Equal(t, 2, runReport(t.Context(), []string{"-dir", t.TempDir(), "-min-ratio", "0.5"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "rdmafleet report: -min-ratio 0.5, -mads 6: want a ratio above 1")
	assert.Equal(t, 2, runReport(t.Context(), []string{"-dir", t.TempDir(), "extra"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "want -dir JOBDIR and no arguments")
}

// TestReportCommandMax: -max takes RDMABENCH_MAX's syntax; cells over it
// give exit status 3 with the report written, a bad limit status 2.
func TestReportCommandMax(t *testing.T) {
	if os.Getenv(env.VarVM) == "1" {
		t.Skip("skipping in the VM: reads jobreport's recorded job from the source tree, which only the host has")
	}
	dir := filepath.Join(t.TempDir(), "job")
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../internal/fleet/jobreport/testdata/job")))
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 3, runReport(t.Context(), []string{"-dir", dir, "-max", "p50=100us"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "cells over the limits: 6 of 12\n")
	assert.Contains(t, stderr.String(), "fleet cells over an absolute limit")
	assert.Equal(t, 0, runReport(t.Context(), []string{"-dir", dir, "-max", "p50=1s"}, &stdout, &stderr))
	stderr.Reset()
	assert.Equal(t, 2, runReport(t.Context(), []string{"-dir", dir, "-max", "p42=1us"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `-max="p42=1us": "p42" is not a statistic a run reports`)
}

// TestRunFleetRails: -rails fake0,fake1 over three fake nodes pairs rail
// with rail: each dst's rdmapeer serves both devices, each src's
// benchmark measures each rail against the peer's device of its name,
// the results are named /rail=DEV (the fake's second rail 1 us slower),
// the matrix has one table per rail and size, and each rail is judged
// and drawn on its own.
func TestRunFleetRails(t *testing.T) {
	dir, code, _ := fleetRun(t, 3, nil, "-rails", "fake0,fake1", "-retest=false")
	require.Equal(t, 0, code)
	res := readJobFile(t, dir, "pairs/round01-n2-n3.txt")
	assert.Contains(t, res, "rdmabench-mode: fleet\nrdma-device: fake0,fake1\n", "the job's device line names the rails")
	assert.Contains(t, res, "BenchmarkRDMAWrite/src=n2/dst=n3/rail=fake0/size=2-4 1000 10054 ns/op")
	assert.Contains(t, res, "BenchmarkRDMAWrite/src=n2/dst=n3/rail=fake1/size=2-4 1000 11054 ns/op")
	assert.Contains(t, readJobFile(t, dir, "raw/round01-n2-n3.peer.log"), "rdmapeer: stopped")

	m := readJobFile(t, dir, "matrix.txt")
	t.Logf("matrix.txt:\n%s", m)
	for _, rail := range []string{"fake0", "fake1"} {
		for _, size := range []string{"2", "4096"} {
			assert.Contains(t, m, "RDMAWrite/rail="+rail+"/size="+size, "a table per rail and size")
		}
	}
	out := readJobFile(t, dir, "outliers.txt")
	for _, rail := range []string{"fake0", "fake1"} {
		assert.Contains(t, out, "judged on: RDMAWrite/rail="+rail+"/size=2 p50-sec", "each rail judged on its own unless -judge names one")
		assert.FileExists(t, filepath.Join(dir, "heatmap-"+rail+".png"), "a heat map per rail")
	}

}
