//go:build linux

package main

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/internal/fleet/fakenode"
)

// TestMain: run through a link named srun, rdmafleet, rdmapeer or
// rdmabench.test (fakenode.Bin), the test binary plays that program.
func TestMain(m *testing.M) {
	fakenode.Run(func(ctx context.Context, args []string) int {
		return dispatch(ctx, args, os.Getenv, os.Environ(), os.Stdout, os.Stderr)
	})
	goleak.VerifyTestMain(m) // fails the run when a test leaves a goroutine behind
}
