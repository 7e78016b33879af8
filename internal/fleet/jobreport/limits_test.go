package jobreport

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/latency"
)

// TestReportLimits: the recorded job judged against absolute limits. Each
// of the 6 pairs has 2 benchmarks (size 2 and 4096), so each limit judges
// 12 cells. The pairs with n4 are ~100 us slower (p50 ~112 us at 2 B,
// ~170 us at 4 KiB); the others 11.5-12 us at 2 B and ~70 us at 4 KiB.
func TestReportLimits(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	o := DefaultOptions
	var err error
	o.Limits, err = ParseLimits("p50=100us")
	require.NoError(t, err)
	var stdout bytes.Buffer
	err = Write(t.Context(), dir, o, &stdout)
	require.ErrorIs(t, err, ErrOverLimits)
	assert.ErrorIs(t, err, latency.ErrLimit, "the same sentinel as a run over RDMABENCH_MAX")
	assert.Contains(t, err.Error(), "6 of 12 cells")
	out := stdout.String()
	assert.Contains(t, out, "absolute limits (-max p50=100µs), on each cell's median:\n")
	// n1 -> n4 at 2 B: the median of its six p50s (112302, 112326, 112448,
	// 112503, 111529, 112448...) as matrix.golden shows it.
	assert.Contains(t, out, "over limit: round 1 n1 n4 RDMAWrite/size=2 p50 112.3")
	assert.Contains(t, out, "over limit: round 1 n1 n4 RDMAWrite/size=4096 p50 170.")
	assert.NotContains(t, out, "n1 n2 RDMAWrite", "the fast pairs are within the limit")
	assert.Contains(t, out, "cells over the limits: 6 of 12\n")
	assert.Equal(t, readJobFile(t, dir, "outliers.txt"), out, "outliers.txt holds the verdict too")

	// A limit every cell meets: no error, and the count says so.
	o.Limits, err = ParseLimits("p99=10ms,max=20ms")
	require.NoError(t, err)
	stdout.Reset()
	require.NoError(t, Write(t.Context(), dir, o, &stdout))
	assert.Contains(t, stdout.String(), "cells over the limits: 0 of 24\n")

	// A limit on a figure the results do not report (p99.9 needs more
	// samples) fails every cell, as a run with it not computed fails
	// RDMABENCH_MAX: nothing shows the cell within it.
	o.Limits, err = ParseLimits("p99.9=1s")
	require.NoError(t, err)
	stdout.Reset()
	require.ErrorIs(t, Write(t.Context(), dir, o, &stdout), ErrOverLimits)
	assert.Contains(t, stdout.String(), "over limit: round 3 n1 n2 RDMAWrite/size=2 p99.9 not reported (too few samples for it?) limit 1s\n")
	assert.Contains(t, stdout.String(), "cells over the limits: 12 of 12\n")

	// A failed pair (no result file) is not a cell: it is in the failed list.
	require.NoError(t, os.Remove(filepath.Join(dir, "pairs", "round02-n4-n2.txt")))
	o.Limits, err = ParseLimits("p50=100us")
	require.NoError(t, err)
	stdout.Reset()
	require.ErrorIs(t, Write(t.Context(), dir, o, &stdout), ErrOverLimits)
	assert.Contains(t, stdout.String(), "cells over the limits: 4 of 10\n")

	// Bad syntax is refused by the one parser, naming the flag.
	_, err = ParseLimits("p99<20us")
	assert.ErrorContains(t, err, `-max="p99<20us": "p99<20us" is not stat=duration (example: -max=p99=20us`)
	assert.False(t, errors.Is(err, ErrOverLimits))
}
