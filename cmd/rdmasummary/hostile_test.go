package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDevZero: a line that never ends is a clear error, not the host's
// memory.
func TestDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("skipping test: no /dev/zero: %v", err)
	}
	var stdout, stderr strings.Builder
	code := run([]string{"/dev/zero"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "/dev/zero:1: line too long for a results file")
	assert.Empty(t, stdout.String())
}

// TestManyMalformed: 200,000 malformed lines give a bounded error: the
// first few lines and the count.
func TestManyMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.txt")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("BenchmarkX 1 x ns/op\n", 200000)), 0o644))
	var stdout, stderr strings.Builder
	code := run([]string{path}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "(the first 10 of 200000 malformed lines)")
	assert.Less(t, stderr.Len(), 4096)
}

// TestNaN: a NaN, an infinity or a negative count is refused, with its
// line, and never reaches the table.
func TestNaN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.txt")
	in := "BenchmarkRDMAWrite/size=2 2000 15000 ns/op 11000 p50-ns\n" +
		"BenchmarkRDMAWrite/size=2 2000 NaN ns/op +Inf p50-ns\n" +
		"BenchmarkRDMAWrite/size=2 -5 15000 ns/op 11000 p50-ns\n"
	require.NoError(t, os.WriteFile(path, []byte(in), 0o644))
	var stdout, stderr strings.Builder
	code := run([]string{path}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.NotContains(t, stdout.String(), "NaN")
	assert.NotContains(t, stdout.String(), "-5")
	assert.Contains(t, stdout.String(), "1 runs x 2000 round trips")
	assert.Equal(t, "rdmasummary: skipped "+path+":2: NaN ns/op: want a finite value from 0 to 1e+15\n"+
		"rdmasummary: skipped "+path+":3: -5 iterations: want at least 1\n", stderr.String())
}
