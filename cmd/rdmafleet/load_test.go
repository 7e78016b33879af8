//go:build linux

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/fleet/fakenode"
)

// TestRunFleetUnderLoad: RDMABENCH_LOAD reaches every pair's benchmark
// through the agents; each pair file says the job ran under load (once,
// the job's line) and keeps the stream's load-MB/s beside the latency;
// matrix.txt shows it; outliers.txt says the job ran under load and
// judges the latency alone (n4, slow, is named; its pairs stream least).
func TestRunFleetUnderLoad(t *testing.T) {
	dir, code, stderr := fleetRun(t, 4, map[string]string{"RDMABENCH_LOAD": "64K", "FAKE_SLOW": "n4"}, "-retest=false", "-max", "p50=25us")
	require.Equal(t, 3, code, "n4's pairs are over -max p50=25us")
	assert.Contains(t, stderr, "rdmafleet: load: each pair's latency is measured under load (RDMABENCH_LOAD=64K)")

	res := readJobFile(t, dir, "pairs/round03-n1-n2.txt")
	assert.Equal(t, 1, strings.Count(res, "rdmabench-load: 65536\n"), res)
	// The fake streams 1e6/10000 = 100 MB/s a pair at 10 us, +1 a repetition.
	assert.Contains(t, res, "BenchmarkRDMAWrite/src=n1/dst=n2/size=2-4 1000 10054 ns/op 9504 min-ns 10004 p50-ns 30012 p99-ns 100 load-MB/s")

	m := readJobFile(t, dir, "matrix.txt")
	assert.Contains(t, m, "rdmabench-load: 65536\n")
	assert.Contains(t, m, "load-B/s")
	// n1 -> n2: 100, 101, 102 MB/s, the median 101 M bytes a second; n1
	// -> n4 (slow): 33.3, 34.3, 35.3.
	assert.Regexp(t, `load-B/s\s+│\s*\nn1\s+101\.00M ± ∞ ¹\s+34\.30M ± ∞ ¹\n`, m)

	out := readJobFile(t, dir, "outliers.txt")
	// Medians: 3 pairs without n4 at 101, its 3 at 34.3: over 6 pairs
	// (34.3+101)/2 = 67.65, the lowest the first of n4's in plan order.
	assert.Contains(t, out, "under load: 65536-byte RDMA WRITEs streamed on each pair's device beside its latency (RDMABENCH_LOAD, rdmabench-load 65536); load-MB/s median 67.65 over 6 pairs, lowest 34.3 (n1 n4)")
	assert.Contains(t, out, "node n4: in 3 of its 3 pairs flagged or failed\n")
	// -max holds the latency: the 3 pairs with n4 at both sizes, of 12
	// cells (6 pairs x 2 sizes); the load is not a cell.
	assert.Contains(t, out, "cells over the limits: 6 of 12\n")
}

// TestLoadRefusals: a load every benchmark would refuse, and a throughput
// as the metric to judge, fail before anything runs (exit 2); rdmafleet
// plan says in its header that the pairs run under load.
func TestLoadRefusals(t *testing.T) {
	bin := fakenode.Bin(t)
	common := []string{"-nodes", "n[1-4]", "-srun", filepath.Join(bin, "srun"), "-bench", filepath.Join(bin, "rdmabench.test"), "-peer", filepath.Join(bin, "rdmapeer")}
	for _, tc := range []struct {
		name, load string
		args       []string
		want       string
	}{
		{"too big", "16M", nil, `rdmafleet run: RDMABENCH_LOAD="16M": want the load stream's message size from 1 byte to 8M, e.g. RDMABENCH_LOAD=64K (0: no load) (rdmafleet passes it to every pair's benchmark)`},
		{"not a size", "yes", nil, `RDMABENCH_LOAD="yes": want the load stream's message size`},
		{"judged on the load", "64K", []string{"-metric", "load-MB/s"}, "-metric load-MB/s: the load stream's throughput (RDMABENCH_LOAD) is shown in matrix.txt beside the latency but never judged; judge a time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "job")
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string { return map[string]string{"RDMABENCH_LOAD": tc.load}[k] }
			code := runDriver(context.Background(), append(append([]string{"-dir", dir}, common...), tc.args...), getenv, &stdout, &stderr)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tc.want)
			assert.NoDirExists(t, dir, "nothing ran")
		})
	}

	plan := func(load string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := runPlan(t.Context(), []string{"-nodes", "n[1-4]"}, func(k string) string { return map[string]string{"RDMABENCH_LOAD": load}[k] }, &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	plain, _, code := plan("")
	require.Equal(t, 0, code)
	assert.NotContains(t, plain, "load")
	loaded, _, code := plan("64K")
	require.Equal(t, 0, code)
	header, rest, _ := strings.Cut(loaded, "\n")
	assert.Equal(t, "# load: each pair's latency is measured under load (RDMABENCH_LOAD=64K): src's benchmark streams 65536-byte RDMA WRITEs into a second session of dst's rdmapeer on the device measured; the stream's load-MB/s is kept in each pair's results and shown in matrix.txt, never judged", header)
	assert.Equal(t, plain, rest, "the same rounds")
	_, stderr, code := plan("16M")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `rdmafleet plan: RDMABENCH_LOAD="16M"`)
}
