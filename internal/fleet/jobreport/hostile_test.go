package jobreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
)

// writeWithin runs Write and fails the test when it takes longer than
// within (a report blocked on a FIFO would never return).
func writeWithin(t *testing.T, ctx context.Context, dir string, within time.Duration) (string, error) {
	t.Helper()
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Write(ctx, dir, DefaultOptions, &stdout) }()
	select {
	case err := <-done:
		return stdout.String(), err
	case <-time.After(within):
		t.Fatalf("Write still running after %v", within)
		return "", nil
	}
}

// TestReportFIFO: a FIFO among the pair files fails its pair; the report
// does not wait for a writer.
func TestReportFIFO(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	p := filepath.Join(dir, "pairs", "round01-n1-n4.txt")
	require.NoError(t, os.Remove(p))
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	out, err := writeWithin(t, t.Context(), dir, 10*time.Second)
	require.NoError(t, err)
	assert.Contains(t, out, "failed: round 1 n1 n4: unreadable result file: open "+p+": not a regular file (p---------)")
}

// TestReportPlanFIFO: a FIFO as the plan is refused at once.
func TestReportPlanFIFO(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	p := filepath.Join(dir, jobdir.PlanFile)
	require.NoError(t, os.Remove(p))
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	_, err := writeWithin(t, t.Context(), dir, 10*time.Second)
	assert.ErrorIs(t, err, jobdir.ErrNotRegular)
}

// TestReportCancelled: a cancelled context (SIGINT, SIGTERM) ends the
// report before it writes anything.
func TestReportCancelled(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := writeWithin(t, ctx, dir, 10*time.Second)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NoFileExists(t, filepath.Join(dir, "matrix.txt"))
}

// TestReportHugeReason: a failure file's reason of 10 MB reaches
// outliers.txt and stdout cut to jobdir.MaxReason bytes.
func TestReportHugeReason(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	require.NoError(t, os.Remove(filepath.Join(dir, "pairs", "round01-n1-n4.txt")))
	huge := "round: 1\nsrc: n1\ndst: n4\nreason: " + strings.Repeat("é", 5<<20) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pairs", "round01-n1-n4.failed"), []byte(huge), 0o644))
	out, err := writeWithin(t, t.Context(), dir, 30*time.Second)
	require.NoError(t, err)
	outliers := readJobFile(t, dir, "outliers.txt")
	assert.Less(t, len(outliers), 4096)
	assert.Equal(t, outliers, out)
	assert.Contains(t, out, "failed: round 1 n1 n4: "+strings.Repeat("é", jobdir.MaxReason/2)+"... (cut: over 512 bytes)\n")
}
