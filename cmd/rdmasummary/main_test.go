package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun prints the summary of the package's real results file and
// saves the same text as summary.txt.
func TestRun(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr strings.Builder
	code := run([]string{"-out", out, "../../internal/summary/testdata/bench.txt"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	golden, err := os.ReadFile("../../internal/summary/testdata/summary.golden")
	require.NoError(t, err)
	assert.Equal(t, string(golden), stdout.String())
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
		{[]string{"-out", ".", "-artifacts", "nowhere", "../../internal/summary/testdata/bench.txt"}, 1, "nowhere"},
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
