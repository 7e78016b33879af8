//go:build linux

package rdmalat_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/internal/work"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// TestWorkSameWhetherWaitsSpin measures RDMA WRITE round trips three
// ways: back to back; with the initiator idling 200 us before each
// (RDMABENCH_GAP), so that the responder's wait spins far longer; and with
// a busy thread sharing the responder's CPU, so that the responder is
// descheduled in and between its waits and at times finds the next write
// already there. The counter leaves out the polls that found nothing, so
// no function's user work may move: not the responder's loop, not the
// provider's, not libc's. Only the initiator's loop may grow, by the
// gap's own few instructions, and the vDSO's clock reads retry when a tick
// lands in them. With no counter (rxevm without -insns) the metrics must
// be absent, as in TestWorkFindsExtraWork.
func TestWorkSameWhetherWaitsSpin(t *testing.T) {
	p := newPair(t, variant{spec.Write, spec.RC, false}, "", 64)
	const n = 2000
	work.Prepare() // the kernel's roles, before a run: sending them takes longer than a waiting peer allows
	measure := func(what string, gap time.Duration) (work.Profile, error) {
		p.Gap = gap
		defer func() { p.Gap = 0 }()
		run, err := p.Start(8, 200)
		require.NoError(t, err)
		defer run.Close()
		finish := rdmalat.StartWork(run)
		for range n {
			_, err := run.Next()
			require.NoError(t, err)
		}
		require.NoError(t, run.Close())
		m, profile, err := finish()
		if err != nil {
			return work.Profile{}, err
		}
		t.Logf("%s: %v", what, m)
		if os.Getenv(work.EnvPlugin) == "" {
			return work.Profile{}, nil // a hardware counter: no profile, spins counted
		}
		prof, err := profile()
		require.NoError(t, err, "the plugin's profile")
		return prof, nil
	}
	base, err := measure("back to back", 0)
	if err != nil {
		require.ErrorIs(t, err, work.ErrUnavailable, "no work metrics, and not for want of a counter")
		require.Empty(t, os.Getenv(work.EnvPlugin), "rxevm -insns set $%s, yet no counter: %v", work.EnvPlugin, err)
		t.Logf("no counter here, as expected without rxevm -insns: %v", err)
		return
	}
	if os.Getenv(work.EnvPlugin) == "" {
		t.Logf("a hardware counter counts the spins too: nothing to compare")
		return
	}
	gapped, err := measure("gap 200us", 200*time.Microsecond)
	require.NoError(t, err)

	// The busy neighbour: a thread of this process pinned to the
	// responder's CPU. Its instructions there count too (the plugin tells
	// vCPUs apart, not threads), in functions the loops never run.
	cpu, pinned := p.CPUs[1].ID()
	require.True(t, pinned, "the responder's thread is unpinned: nothing to share its CPU with")
	busy := spinOn(t, cpu)
	shared, err := measure("CPU shared with a busy thread", 0)
	busy.end()
	require.NoError(t, err)

	exe, err := os.Executable()
	require.NoError(t, err)
	check := func(what string, other work.Profile, grows int) {
		t.Helper()
		grown := 0
		for _, c := range work.Diff(base, other, work.SpaceUser) {
			switch {
			case c.Object == "[vdso]" || c.Old == 0:
				t.Logf("%s, not judged (the clock's retries, or another thread's): %v", what, c)
				continue
			case math.Abs(c.Delta()) <= 0.05:
				continue
			case grown < grows && c.Object == filepath.Base(exe) && c.Delta() > 0 && c.Delta() < 20:
				grown++
				t.Logf("%s, the initiator's loop: %v", what, c)
				continue
			}
			t.Errorf("%s: %v (%.3f -> %.3f insns/op): user work moved with how long the waits spin", what, c, c.Old, c.New)
		}
	}
	check("gap 200us", gapped, 1)
	check("CPU shared", shared, 0)
}
