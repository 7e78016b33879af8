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

// TestMatrixBounded: past fullMatrixNodes, matrix.txt holds the judged
// table only, exactly as the full matrix prints it, and says so; at the
// bound it is the full matrix (the golden file).
func TestMatrixBounded(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("testdata", "matrix.golden"))
	require.NoError(t, err)
	defer func(n int) { fullMatrixNodes = n }(fullMatrixNodes)

	fullMatrixNodes = 4 // the job's nodes
	dir := copyDir(t, "testdata/job")
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &bytes.Buffer{}))
	assert.Equal(t, string(full), readJobFile(t, dir, "matrix.txt"))

	fullMatrixNodes = 3
	dir = copyDir(t, "testdata/job")
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &bytes.Buffer{}))
	got := readJobFile(t, dir, "matrix.txt")
	assert.Contains(t, got, "# 4 nodes, more than 3: only the judged table (RDMAWrite/size=2 p50-sec, the heat map's) is written;\n")
	// The judged table, as the full matrix has it, and no other.
	tables := strings.Split(string(full), "\n\n")
	var judged string
	for _, tb := range tables {
		if strings.HasPrefix(tb, "RDMAWrite/size=2 ") && strings.Contains(tb, "\nsrc              │   p50-sec ") {
			judged = tb
		}
	}
	require.NotEmpty(t, judged, "the golden matrix's p50 table at size 2")
	assert.True(t, strings.HasSuffix(got, "\n\n"+strings.TrimSuffix(judged, "\n")+"\n"), "matrix.txt ends with the judged table:\n%s", got)
	assert.Equal(t, 1, strings.Count(got, "│\nsrc "), "one table:\n%s", got)
	assert.Equal(t, readJobFile(t, dir, "outliers.txt"), readJobFile(t, copyDirReported(t), "outliers.txt"), "outliers.txt does not change")
}

// copyDirReported is testdata/job with its full report written.
func copyDirReported(t *testing.T) string {
	dir := copyDir(t, "testdata/job")
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &bytes.Buffer{}))
	return dir
}
