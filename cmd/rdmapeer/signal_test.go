package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecondSignalExits: while Shutdown waits for a session that does
// not end (once: up to the client's 10-minute timeout), a second signal
// returns at once.
func TestSecondSignalExits(t *testing.T) {
	sigc := make(chan os.Signal, 2)
	release := make(chan struct{})
	var shutdowns sync.WaitGroup
	shutdowns.Add(1)
	shutdown := func() { defer shutdowns.Done(); <-release }
	var mu sync.Mutex
	var lines []string
	logf := func(f string, a ...any) { mu.Lock(); lines = append(lines, fmt.Sprintf(f, a...)); mu.Unlock() }
	status := make(chan int, 1)
	go func() {
		status <- serveUntil(context.Background(), sigc, make(chan error), shutdown, func() string { return "stopped" }, logf)
	}()
	sigc <- syscall.SIGTERM
	select {
	case <-status:
		t.Fatal("returned before Shutdown ended or a second signal came")
	case <-time.After(100 * time.Millisecond):
	}
	start := time.Now()
	sigc <- syscall.SIGINT
	select {
	case code := <-status:
		assert.Equal(t, 1, code)
	case <-time.After(2 * time.Second):
		t.Fatal("the second signal did not end it")
	}
	assert.Less(t, time.Since(start), time.Second)
	close(release)
	shutdowns.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, lines, 2)
	assert.Equal(t, "terminated: shutting down (again to exit at once)", lines[0])
	assert.Equal(t, "interrupt again: exiting without waiting for the sessions to end", lines[1])
}

// TestOneSignalWaits: one signal shuts down cleanly and logs the summary.
func TestOneSignalWaits(t *testing.T) {
	sigc := make(chan os.Signal, 2)
	var lines []string
	sigc <- syscall.SIGTERM
	code := serveUntil(context.Background(), sigc, make(chan error), func() {}, func() string { return "stopped: 0 sessions" },
		func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) })
	assert.Equal(t, 0, code)
	assert.Equal(t, []string{"terminated: shutting down (again to exit at once)", "stopped: 0 sessions"}, lines)
}
