//go:build linux

package rdmalat_test

import (
	"debug/elf"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/internal/work"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// TestWorkFindsExtraWork runs RDMA WRITE round trips twice, the second time
// with a known 1000 more user instructions per round trip (the loop's
// extra-work knob), and checks that the work metrics find them. In rxevm
// with -insns (make test-vm runs it so) the plugin counts, and user work
// must grow by 1000 within 1% with kernel work unchanged within 2%. With
// no counter the metrics must be absent, saying why. With a hardware
// counter (bare metal) the spins are counted too, so only the growth's
// sign and rough size are checked.
func TestWorkFindsExtraWork(t *testing.T) {
	p := newPair(t, variant{spec.Write, spec.RC, false}, "", 64)
	const extra, want = 500, 1000.0
	var profiles []func() (work.Profile, error)
	measure := func(k uint32) (user, kernel float64, err error) {
		run, err := p.Start(8, 200)
		require.NoError(t, err)
		defer run.Close()
		rdmalat.SetExtraWork(run, k)
		finish := rdmalat.StartWork(run)
		for range 3000 {
			_, err := run.Next()
			require.NoError(t, err)
		}
		require.NoError(t, run.Close())
		m, profile, err := finish()
		profiles = append(profiles, profile)
		if err == nil && os.Getenv(work.EnvPlugin) != "" {
			// The plugin's profile is of this window: read it before the
			// next reset.
			p, perr := profile()
			require.NoError(t, perr, "the plugin's profile")
			profiles[len(profiles)-1] = func() (work.Profile, error) { return p, nil }
		}
		t.Logf("extra %d: %v", k, m)
		return m[work.UnitUser], m[work.UnitKernel], err
	}
	u0, k0, err := measure(0)
	if err != nil {
		require.ErrorIs(t, err, work.ErrUnavailable, "no work metrics, and not for want of a counter")
		require.Empty(t, os.Getenv(work.EnvPlugin), "rxevm -insns set $%s, yet no counter: %v", work.EnvPlugin, err)
		t.Logf("no counter here, as expected without rxevm -insns: %v", err)
		return
	}
	u1, k1, err := measure(extra)
	require.NoError(t, err)
	t.Logf("per round trip: user %.1f -> %.1f (%+.1f, want %+.0f), kernel %.1f -> %.1f (%+.2f%%)",
		u0, u1, u1-u0, want, k0, k1, 100*(k1/k0-1))
	if os.Getenv(work.EnvPlugin) == "" {
		require.Greater(t, u1-u0, want/2, "the hardware counter missed the extra work")
		return
	}
	require.Greater(t, u0, 100.0, "user work per round trip implausibly small: are the loop's markers counted?")
	require.Greater(t, k0, 1000.0, "kernel work per round trip implausibly small: the doorbell is a system call")
	require.InDelta(t, want, u1-u0, want/100, "user work grew by %.1f, want %.0f", u1-u0, want)
	require.Less(t, math.Abs(k1/k0-1), 0.02, "kernel work moved with user-only extra work")

	// Where the work went: the profiles sum to the metrics, and their diff
	// names the loop that runs the extra work as what grew, by 2N.
	p0, err := profiles[0]()
	require.NoError(t, err)
	p1, err := profiles[1]()
	require.NoError(t, err)
	require.InDelta(t, u0, p0.Total(work.SpaceUser), 0.01, "the profile's user work is not the metric's")
	require.InDelta(t, k1, p1.Total(work.SpaceKernel), 0.01, "the profile's kernel work is not the metric's")
	for _, sp := range []work.Space{work.SpaceUser, work.SpaceKernel} {
		top := work.Diff(work.Profile{}, p0, sp) // p0's functions, most work first
		for _, c := range top[:min(6, len(top))] {
			t.Logf("%s %s %s: %.1f insns/op", sp, c.Object, c.Name, c.New)
		}
	}
	d := work.Diff(p0, p1, work.SpaceUser)
	require.NotEmpty(t, d)
	for _, c := range d[:min(8, len(d))] {
		t.Logf("%v", c)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	require.Equal(t, filepath.Base(exe), d[0].Object, "the function that grew most is not the benchmark's: %v", d[0])
	if symbols(t, exe) {
		require.Contains(t, d[0].Name, "write", "the function that grew most is not the write loop: %v", d[0])
	} else {
		// go test strips its binaries unless -ldflags=-s=false: the
		// benchmark's own functions read as file+offset.
		require.True(t, strings.HasPrefix(d[0].Name, filepath.Base(exe)+"+0x"), "%v: want file+offset in a stripped binary", d[0])
		t.Logf("%s has no symbol table (go test -ldflags=-s=false keeps it): functions read as file+offset", exe)
	}
	require.InDelta(t, want, d[0].Delta(), want/100, "%v: want %+.0f", d[0], want)
	if len(d) > 1 {
		require.Less(t, math.Abs(d[1].Delta()), want/20, "a second function moved: %v", d[1])
	}
}

// symbols reports whether the ELF file path has a symbol table.
func symbols(t *testing.T, path string) bool {
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	return f.Section(".symtab") != nil
}
