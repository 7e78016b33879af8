//go:build linux

package rdmalat_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
	"github.com/rdmabench/rdmabench/verbs"
)

// memoryPair is a loopback WRITE pair on the configured device whose
// buffers are set up as hugePages and odp ask.
func memoryPair(t *testing.T, c env.Config, hugePages, odp bool) (*rdmalat.Pair, error) {
	t.Helper()
	cpus, err := c.PinCPUs()
	require.NoError(t, err)
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{
			Device: c.Device, GIDIndex: c.GIDIndex, Op: spec.Write, Transport: spec.RC, MaxSize: 64, Inline: c.Inline, MTU: c.MTU,
			HugePages: hugePages, ODP: odp,
		},
		CPUs: cpus, Timeout: 10 * time.Second,
	})
	if err == nil {
		t.Cleanup(func() { assert.NoError(t, p.Close()) })
	}
	return p, err
}

// TestHugePages: with RDMABENCH_HUGEPAGES the buffer is backed by huge
// pages (this process's smaps says so), round trips run on it, the
// configuration lines record it; with no huge page free the endpoint is
// refused with how to reserve some. The VM boots with hugepages=8.
func TestHugePages(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	h, err := verbs.ReadHugePages()
	require.NoError(t, err)
	if !c.InVM && h.Free < 2 {
		t.Skipf("skipping test: %d huge pages free (HugePages_Free), a loopback pair needs 2: sysctl vm.nr_hugepages=8", h.Free)
	}
	p, err := memoryPair(t, c, true, false)
	require.NoError(t, err, "huge pages: %+v", h)
	huge, err := verbs.IsHugePage(p.Local.Buffer())
	require.NoError(t, err)
	assert.True(t, huge, "the initiator's buffer is in huge pages (/proc/self/smaps KernelPageSize)")
	assert.Zero(t, len(p.Local.Buffer())%h.Size, "a whole number of huge pages")
	b := &metricsB{t: t, n: 100, metrics: map[string]float64{}}
	rdmalat.Measure(b, p, 64, 10, nil)
	assert.Positive(t, b.metrics["p50-ns"])
	assert.Contains(t, testenv.ConfigLines(p, c), "rdmabench-hugepages: on")
	plain, err := memoryPair(t, c, false, false)
	require.NoError(t, err)
	huge, err = verbs.IsHugePage(plain.Local.Buffer())
	require.NoError(t, err)
	assert.False(t, huge, "without the setting, ordinary pages")
	assert.NotContains(t, strings.Join(testenv.ConfigLines(plain, c), "\n"), "rdmabench-hugepages", "no line when unset")

	if !c.InVM {
		return // the refusal takes the host's reserved pages away: only in the VM
	}
	const nr = "/proc/sys/vm/nr_hugepages"
	old, err := os.ReadFile(nr)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, os.WriteFile(nr, old, 0)) })
	// The pairs above hold 2 pages until the cleanups: reserve exactly those.
	require.NoError(t, os.WriteFile(nr, []byte("2"), 0))
	_, err = memoryPair(t, c, true, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RDMABENCH_HUGEPAGES")
	assert.Contains(t, err.Error(), "0 free (HugePages_Free in /proc/meminfo): reserve more, e.g. sysctl vm.nr_hugepages=4")
	t.Log(err)
}

// TestODP: where the device reports on-demand paging for RC WRITE, a pair
// with RDMABENCH_ODP runs round trips on buffers registered with it; where
// not, the endpoint is refused with the reason. Debian 12's rxe (Linux
// 6.1) has no ODP: in the VM the refusal is what must happen.
func TestODP(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	ctx, err := verbs.Open(c.Device)
	require.NoError(t, err)
	caps, err := ctx.ODP()
	require.NoError(t, ctx.Close())
	require.NoError(t, err)
	t.Logf("%s: ODP %+v", c.Device, caps)
	p, err := memoryPair(t, c, false, true)
	if c.InVM || !caps.Supported || caps.RC&verbs.ODPWrite == 0 {
		require.Error(t, err)
		assert.Contains(t, err.Error(), "does not support on-demand paging")
		assert.Contains(t, err.Error(), "unset RDMABENCH_ODP")
		assert.False(t, caps.Supported, "a refusal where the device said it supports ODP")
		t.Log(err)
		return
	}
	require.NoError(t, err)
	b := &metricsB{t: t, n: 100, metrics: map[string]float64{}}
	rdmalat.Measure(b, p, 64, 10, nil)
	assert.Positive(t, b.metrics["p50-ns"])
	assert.Contains(t, testenv.ConfigLines(p, c), "rdmabench-odp: on")
}
