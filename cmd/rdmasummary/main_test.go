package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// results writes a small results file and returns its path.
func results(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "bench.txt")
	var b strings.Builder
	b.WriteString("rdma-device: rxe0\n")
	for i := range 6 {
		fmt.Fprintf(&b, "BenchmarkRDMAWrite/size=2 \t2000\t15000 ns/op\t%d min-ns\t11000 p50-ns\t1 stalls\n", 10000+i)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestRun prints the summary and saves the same text as summary.txt.
func TestRun(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr strings.Builder
	code := run([]string{"-out", out, results(t)}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stdout.String(), "device: rxe0")
	// min 10.000 to 10.005 us: median 10.0025, range 10.000-10.005.
	assert.Regexp(t, `\nRDMAWrite +2 +10\.00 ±0% +11\.00 ±0% +- +- +- +- +1 \(1–1\)\n`, stdout.String())
	saved, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	require.NoError(t, err)
	assert.Equal(t, stdout.String(), string(saved))
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "want one results file"},
		{[]string{"-artifacts", "a", "bench.txt"}, 2, "-artifacts needs -out"},
		{[]string{"missing.txt"}, 1, "missing.txt: no such file"},
		{[]string{"-out", ".", "-artifacts", "nowhere", results(t)}, 1, "nowhere"},
	} {
		var stdout, stderr strings.Builder
		dir := t.TempDir()
		args := c.args
		for i, a := range args {
			if a == "." {
				args[i] = dir
			}
		}
		assert.Equal(t, c.code, run(args, &stdout, &stderr), "%v", c.args)
		assert.Contains(t, stderr.String(), c.want, "%v", c.args)
	}
}
