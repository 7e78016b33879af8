package jobreport

import (
	"bytes"
	"flag"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// copyDir copies testdata/job into a temporary directory.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "job")
	require.NoError(t, os.CopyFS(to, os.DirFS(from)))
	return to
}

// TestReportGolden: recorded pair files of 4 nodes (n4 ~100 us slower, as
// with a netem delay of 50 us each way on its NIC; one retest failed) give
// the matrix and verdict in the golden files, and a heat map.
func TestReportGolden(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	for _, name := range []string{"matrix.txt", "outliers.txt"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		golden := filepath.Join("testdata", strings.TrimSuffix(name, ".txt")+".golden")
		if *update {
			require.NoError(t, os.WriteFile(golden, got, 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s (go test -update rewrites %s)", name, golden)
	}
	assert.Equal(t, readJobFile(t, dir, "outliers.txt"), stdout.String())
	f, err := os.Open(filepath.Join(dir, "heatmap.png"))
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)
	assert.Contains(t, readJobFile(t, dir, "heatmap.svg"), ">n4<")

	// The heat map shows each pair both ways, in microseconds.
	c, err := collect(t.Context(), dir, DefaultOptions, nil)
	require.NoError(t, err)
	grid := heatGrid(c.results, c.judged[0].bench, "p50-sec", c.plan.Nodes)
	assert.InDelta(t, 112.31, grid[0][3], 0.01, "n1 -> n4, measured")
	assert.Equal(t, grid[0][3], grid[3][0], "n4 -> n1, mirrored")
	assert.True(t, math.IsNaN(grid[2][2]))

	// Judged on another size and metric.
	stdout.Reset()
	o := DefaultOptions
	o.Bench, o.Metric = "RDMAWrite/size=4096", "p99-sec"
	require.NoError(t, Write(t.Context(), dir, o, &stdout))
	assert.Contains(t, stdout.String(), "judged on: RDMAWrite/size=4096 p99-sec")
	assert.Contains(t, stdout.String(), "node n4: in 3 of its 3 pairs")
}

func TestReportMissingPair(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	require.NoError(t, os.Remove(filepath.Join(dir, "pairs", "round02-n4-n2.txt")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "retest")))
	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	assert.Contains(t, stdout.String(), "failed: round 2 n4 n2: no result and no failure file (still running, or the job was stopped)\n")
	assert.NotContains(t, stdout.String(), "retest")

	assert.ErrorContains(t, Write(t.Context(), t.TempDir(), DefaultOptions, &stdout), "not a directory of rdmafleet run?")
	o := DefaultOptions
	o.Thresholds.MinRatio = 0.5
	assert.EqualError(t, o.Check(), "-min-ratio 0.5, -mads 6: want a ratio above 1 and a positive count")
}

func readJobFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}
