package jobreport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pair file holding another pair's results fails its own pair, with the
// reason, and leaves the other pair's cell as it was.
func TestReportMismatchedPairFile(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	before, err := collect(t.Context(), dir, DefaultOptions, nil)
	require.NoError(t, err)
	cell, ok := before.results.Cell("RDMAWrite/size=2", "p50-sec", "n2", "n3")
	require.True(t, ok)

	rogue := "pkg: github.com/rdmabench/rdmabench\n" + strings.Repeat(
		"BenchmarkRDMAWrite/src=n2/dst=n3/size=2-4 5000 5260 ns/op 5260 p50-ns\n", 10)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pairs", "round03-n1-n2.txt"), []byte(rogue), 0o644))
	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	assert.Contains(t, stdout.String(), "failed: round 3 n1 n2: bad result file: "+
		filepath.Join(dir, "pairs", "round03-n1-n2.txt")+": holds results of n2 -> n3, not of n1 -> n2\n")
	assert.NotContains(t, stdout.String(), "n2 n3 5.26us")
	after, err := collect(t.Context(), dir, DefaultOptions, nil)
	require.NoError(t, err)
	got, ok := after.results.Cell("RDMAWrite/size=2", "p50-sec", "n2", "n3")
	require.True(t, ok)
	assert.Equal(t, cell, got, "the n2 -> n3 cell is untouched")
	assert.NotContains(t, readJobFile(t, dir, "matrix.txt"), "5.26")
}

// A malformed pair file, or a malformed failure file, fails that pair
// alone; the report is written.
func TestReportMalformedPairFiles(t *testing.T) {
	for name, tc := range map[string]struct{ file, text, want string }{
		"syntax":    {"round01-n1-n4.txt", "BenchmarkRDMAWrite/src=n1/dst=n4/size=2 1000 x ns/op\n", "failed: round 1 n1 n4: bad result file: "},
		"no pair":   {"round01-n1-n4.txt", "BenchmarkRDMAWrite/size=2 1000 5 ns/op\n", "no /src=NODE/dst=NODE in the name"},
		"empty":     {"round01-n1-n4.txt", "", "round01-n1-n4.txt: no results"},
		"directory": {"round01-n1-n4.txt", "/", "failed: round 1 n1 n4: unreadable result file: "},
		"failed":    {"round01-n1-n4.failed", "garbage\n", `failed: round 1 n1 n4: bad failure file: `},
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyDir(t, "testdata/job")
			p := filepath.Join(dir, "pairs", tc.file)
			require.NoError(t, os.Remove(filepath.Join(dir, "pairs", "round01-n1-n4.txt")))
			if tc.text == "/" {
				require.NoError(t, os.Mkdir(p, 0o755))
			} else {
				require.NoError(t, os.WriteFile(p, []byte(tc.text), 0o644))
			}
			var stdout bytes.Buffer
			require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
			assert.Contains(t, stdout.String(), tc.want)
			assert.Contains(t, stdout.String(), "pairs measured: 5, failed: 1")
			assert.FileExists(t, filepath.Join(dir, "matrix.txt"))
		})
	}
}

// The report's files are readable by all, like the rest of the job
// directory on a shared file system.
func TestReportFileModes(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	for _, name := range []string{"matrix.txt", "outliers.txt"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), name)
	}
}
