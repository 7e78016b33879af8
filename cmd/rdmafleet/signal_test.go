package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within runs dispatch and fails the test when it has not returned after
// 10 s.
func within(t *testing.T, ctx context.Context, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- dispatch(ctx, args, func(string) string { return "" }, nil, &stdout, &stderr) }()
	select {
	case code := <-done:
		return code, stderr.String()
	case <-time.After(10 * time.Second):
		t.Fatalf("rdmafleet %v still running after 10 s", args)
		return 0, ""
	}
}

// TestPlanFIFO: rdmafleet plan -plan FIFO does not wait for a writer.
func TestPlanFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plan")
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	code, stderr := within(t, t.Context(), "plan", "-nodes", "n[1-4]", "-plan", p)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "not a regular file")
}

// TestSignalledReport: a signal (the context main cancels on SIGINT and
// SIGTERM) ends rdmafleet report and plan, with status 1.
func TestSignalledReport(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.txt"), []byte("# nodes: n1 n2\n# pattern: all-pairs\n1 n1 n2\n"), 0o644))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	code, stderr := within(t, ctx, "report", "-dir", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "context canceled")
	plan := filepath.Join(t.TempDir(), "plan")
	require.NoError(t, os.WriteFile(plan, []byte("1 n1 n2\n"), 0o644))
	code, stderr = within(t, ctx, "plan", "-nodes", "n[1-2]", "-plan", plan)
	assert.Equal(t, 1, code, "a signal is a failure (1), not bad input (2)")
	assert.Contains(t, stderr, "context canceled")
	// The same plan, not signalled, is read; a bad one is bad input.
	code, _ = within(t, t.Context(), "plan", "-nodes", "n[1-2]", "-plan", plan)
	assert.Equal(t, 0, code)
	require.NoError(t, os.WriteFile(plan, []byte("1 n1 n9\n"), 0o644))
	code, _ = within(t, t.Context(), "plan", "-nodes", "n[1-2]", "-plan", plan)
	assert.Equal(t, 2, code)
}
