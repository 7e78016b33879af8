package jobreport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
)

// writeRounds writes the round files of dir's plan, as rdmafleet run does
// after each round.
func writeRounds(t *testing.T, dir string) *fleet.Plan {
	t.Helper()
	plan, err := jobdir.ReadPlan(t.Context(), filepath.Join(dir, jobdir.PlanFile))
	require.NoError(t, err)
	for _, round := range splitRounds(plan.Steps()) {
		require.NoError(t, jobdir.WriteRound(t.Context(), dir, round))
	}
	return plan
}

// TestReportRoundFiles: with the round files, the report is the one the
// pair files give, without opening them (they are gone here); a pair the
// round file lacks (failed) still comes from its own files.
func TestReportRoundFiles(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	writeRounds(t, dir)
	txt, err := filepath.Glob(filepath.Join(dir, jobdir.PairsDir, "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, txt)
	for _, f := range txt {
		require.NoError(t, os.Remove(f))
	}
	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	for _, name := range []string{"matrix.txt", "outliers.txt"} {
		want, err := os.ReadFile(filepath.Join("testdata", strings.TrimSuffix(name, ".txt")+".golden"))
		require.NoError(t, err)
		assert.Equal(t, string(want), readJobFile(t, dir, name), name)
	}
}

// TestReportForgedRoundFile: a round file that holds another round's pair
// is not used; the round's pairs come from their own files.
func TestReportForgedRoundFile(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	plan := writeRounds(t, dir)
	steps := plan.Steps()
	// Round 1's file gets a result of a round 3 pair, 1000x slower.
	other := steps[len(steps)-1]
	require.NotEqual(t, 1, other.Round)
	forged := "BenchmarkRDMAWrite/src=" + other.Src + "/dst=" + other.Dst + "/size=2-4 5000 9999999 ns/op 9999999 p50-ns\n"
	f, err := os.OpenFile(jobdir.RoundPath(dir, 1), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(forged)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	want, err := os.ReadFile(filepath.Join("testdata", "matrix.golden"))
	require.NoError(t, err)
	assert.Equal(t, string(want), readJobFile(t, dir, "matrix.txt"))
	assert.NotContains(t, stdout.String(), "9999")
}

// TestWriteRoundLeavesOutBadPairs: a round file holds the pair files that
// read as their pair's results, and nothing of the others.
func TestWriteRoundLeavesOutBadPairs(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	plan, err := jobdir.ReadPlan(t.Context(), filepath.Join(dir, jobdir.PlanFile))
	require.NoError(t, err)
	round := splitRounds(plan.Steps())[0]
	require.Len(t, round, 2)
	require.NoError(t, os.WriteFile(jobdir.ResultPath(dir, round[1]), []byte("BenchmarkRDMAWrite/src=x/dst=y-4 1 1 ns/op\n"), 0o644))
	require.NoError(t, jobdir.WriteRound(t.Context(), dir, round))
	var f fleet.PairFile
	data, err := os.ReadFile(jobdir.RoundPath(dir, 1))
	require.NoError(t, err)
	require.NoError(t, fleet.NewPairParser().ParseAll(bytes.NewReader(data), "round", false, &f))
	assert.Equal(t, []fleet.Pair{round[0].Pair}, f.Pairs())
}
