package main

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/perftestcmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	t.Setenv("RDMABENCH_DEVICE", "")
	t.Setenv("RXEVM_OUT", "/rxevm/out")
	c, err := parseFlags([]string{"-bench", "bin/rdmabench.test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Device, GID index and inline are left to resolveDefaults: what the
	// benchmark would pick on the host it runs on, not the VM's values.
	if c.Device != "" || c.GIDIndex != -1 || c.Inline != perftestcmp.InlineDefault || c.Iters != 5000 || c.Rounds != perftestcmp.DefaultRounds || !c.PinPerftest || c.Warmup != 0 || len(c.Tools) != 1 || c.Tools[0].Name() != "write" ||
		c.Timeout != 2*time.Minute || c.OutDir != "/rxevm/out" || len(c.Sizes) != 2 || c.Sizes[0] != 2 || c.Sizes[1] != 4096 {
		t.Errorf("defaults: %+v", c)
	}
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(allowed), 2, "the test names two CPUs this process may use")
	a, b := allowed[0], allowed[len(allowed)-1]
	if c, err = parseFlags([]string{"-bench", "x", "-cpus", fmt.Sprintf("%d, %d", b, a), "-warmup", "10", "-pin=false"}, io.Discard); err != nil ||
		c.CPUs != [2]int{b, a} || c.Warmup != 10 || c.PinPerftest {
		t.Errorf("-cpus %d,%d -warmup 10 -pin=false: %+v, %v", b, a, c, err)
	}
	if c, err = parseFlags([]string{"-bench", "x", "-work-tolerance", "0.01", "-work-kernel-tolerance", "0.05"}, io.Discard); err != nil ||
		c.WorkTolerance != 0.01 || c.WorkKernelTolerance != 0.05 {
		t.Errorf("-work-tolerance 0.01 -work-kernel-tolerance 0.05: %+v, %v", c, err)
	}
	t.Setenv("RDMABENCH_DEVICE", "mlx5_0")
	if c, err = parseFlags([]string{"-bench", "x", "-sizes", "64"}, io.Discard); err != nil || c.Device != "mlx5_0" || len(c.Sizes) != 1 {
		t.Errorf("RDMABENCH_DEVICE=mlx5_0: %+v, %v", c, err)
	}
	for _, args := range [][]string{
		{},
		{"-bench", "x", "-sizes", "2,x"},
		{"-bench", "x", "-sizes", "0"},
		{"-bench", "x", "-iters", "1"},
		{"-bench", "x", "-rounds", "0"},
		{"-bench", "x", "extra"},
		{"-bench", "x", "-warmup", "-1"},
		{"-bench", "x", "-iters", "100", "-warmup", "99"},
		{"-bench", "x", "-cpus", "2"},
		{"-bench", "x", "-cpus", "2,x"},
		{"-bench", "x", "-cpus", "8190,8191"},
		{"-bench", "x", "-work-tolerance", "-0.01"},
		{"-bench", "x", "-work-kernel-tolerance", "-0.05"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
}

// TestCPUsAllowed: a -cpus naming a CPU this process may not run on fails
// at startup, saying which it may use and what to type, before any round
// starts perftest or the benchmark on it.
func TestCPUsAllowed(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	_, err = parseFlags([]string{"-bench", "x", "-cpus", fmt.Sprintf("%d,8191", allowed[0])}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("-cpus=%d,8191: this process may run on CPUs %s; e.g. -cpus=", allowed[0], env.FormatCPUList(allowed)))
}
