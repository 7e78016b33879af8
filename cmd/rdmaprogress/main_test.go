package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

func TestRun(t *testing.T) {
	in := "goos: linux\nBenchmarkRDMAWrite/size=2 \t2000\t15282 ns/op\t11448 p50-ns\nPASS\n"
	var out, status strings.Builder
	code := run([]string{"-count", "2", "-sizes", "3", "-benchmarks", "BenchmarkRDMAWrite\nBenchmarkRDMAAtomic"}, strings.NewReader(in), &out, &status)
	require.Equal(t, 0, code, status.String())
	assert.Equal(t, in, out.String())
	// 3 sizes x 2 runs, and the atomics' 2 operations x 2 runs.
	assert.Contains(t, status.String(), "[1/10] RDMAWrite/size=2 run 1/2")

	status.Reset()
	assert.Equal(t, 2, run([]string{"-count", "0"}, strings.NewReader(""), &out, &status))
	assert.Contains(t, status.String(), "example: go test -bench")
}

// TestMakeBench checks what make bench runs (make -n prints the commands
// without running them): by default the quick run, 3 sizes x 6 runs of
// 2000 round trips; FULL=1 today's full run; COUNT= and SIZES= win.
func TestMakeBench(t *testing.T) {
	if os.Getenv(env.VarVM) == "1" {
		t.Skip("skipping: make bench is run on the host; the VM has no make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skipf("skipping: no make: %v", err)
	}
	plan := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-n", "-C", "../..", "bench", "OUT=" + t.TempDir()}, args...)...)
		cmd.Env = append(os.Environ(), env.VarSizes+"=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		// The go test command and the filter it pipes into, one shell line.
		_, cmdline, ok := strings.Cut(strings.ReplaceAll(string(out), "\\\n", ""), "eval ")
		require.True(t, ok, "make -n bench %v prints no go test -bench command:\n%s", args, out)
		cmdline, _, _ = strings.Cut(cmdline, "\n")
		return cmdline
	}
	quick := plan()
	for _, want := range []string{"RDMABENCH_SIZES=2,64,4096 ", "-benchtime=2000x", "-count=6", "rdmaprogress -count 6 -sizes 3"} {
		assert.Contains(t, quick, want)
	}
	full := plan("FULL=1")
	for _, want := range []string{"-benchtime=1s", "-count=10", "rdmaprogress -count 10 -sizes 4"} {
		assert.Contains(t, full, want)
	}
	assert.NotContains(t, full, "RDMABENCH_SIZES=", "FULL=1 runs the default sizes")
	mine := plan("FULL=1", "COUNT=20", "SIZES=2,8")
	for _, want := range []string{"RDMABENCH_SIZES=2,8 ", "-count=20", "rdmaprogress -count 20 -sizes 2"} {
		assert.Contains(t, mine, want)
	}
}
