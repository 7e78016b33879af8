//go:build linux

package rdmalat_test

import (
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
	"github.com/rdmabench/rdmabench/verbs"
)

// memoryPair is a loopback WRITE pair on the configured device whose
// buffers are set up as hugePages and odp ask.
func memoryPair(t *testing.T, c env.Config, hugePages, odp bool) (*rdmalat.Pair, error) {
	t.Helper()
	return memoryPairWith(t, c, func(e *rdmalat.EndpointConfig) { e.HugePages, e.ODP = hugePages, odp })
}

// memoryPairWith is memoryPair with the endpoints' configuration set by
// set.
func memoryPairWith(t *testing.T, c env.Config, set func(*rdmalat.EndpointConfig)) (*rdmalat.Pair, error) {
	t.Helper()
	cpus, err := c.PinCPUs()
	require.NoError(t, err)
	ecfg := rdmalat.EndpointConfig{
		Device: c.Device, GIDIndex: c.GIDIndex, Op: spec.Write, Transport: spec.RC, MaxSize: 64, Inline: c.Inline, MTU: c.MTU,
	}
	set(&ecfg)
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: ecfg,
		CPUs:     cpus, Timeout: 10 * time.Second,
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
	huge, err = verbs.IsHugePage(rdmalat.ResponderBuffer(p))
	require.NoError(t, err)
	assert.True(t, huge, "the responder's buffer is in huge pages too")
	assert.Zero(t, len(p.Local.Buffer())%h.Size, "a whole number of huge pages")
	b := rdmalattest.NewMetricsB(t, 100)
	rdmalat.Measure(b, p, 64, 10, nil)
	assert.Positive(t, b.Metrics["p50-ns"])
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

// TestTHP: with RDMABENCH_HUGEPAGES=thp both sides' buffers are backed
// by transparent huge pages (AnonHugePages in this process's smaps covers
// each whole buffer), round trips run on them and the configuration lines
// say thp; with transparent huge pages off ("never") the endpoint is
// refused with how to turn them on.
func TestTHP(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	const enabled = "/sys/kernel/mm/transparent_hugepage/enabled"
	mode, err := os.ReadFile(enabled)
	if !c.InVM && (err != nil || strings.Contains(string(mode), "[never]")) {
		t.Skipf("skipping test: transparent huge pages are off or absent here (%s: %q, %v)", enabled, mode, err)
	}
	require.NoError(t, err, "the VM's kernel has transparent huge pages")
	t.Logf("%s: %s", enabled, strings.TrimSpace(string(mode)))
	p, err := memoryPairWith(t, c, func(e *rdmalat.EndpointConfig) { e.THP = true })
	require.NoError(t, err)
	for side, buf := range map[string][]byte{"initiator": p.Local.Buffer(), "responder": rdmalat.ResponderBuffer(p)} {
		n, err := verbs.AnonHugeBytes(buf)
		require.NoError(t, err)
		assert.Equal(t, len(buf), n, "the %s's whole buffer is in transparent huge pages (AnonHugePages)", side)
		assert.Zero(t, uintptr(unsafe.Pointer(&buf[0]))%(2<<20), "the %s's buffer starts on a huge page boundary", side)
	}
	b := rdmalattest.NewMetricsB(t, 100)
	rdmalat.Measure(b, p, 64, 10, nil)
	assert.Positive(t, b.Metrics["p50-ns"])
	c.THP = true
	assert.Contains(t, testenv.ConfigLines(p, c), "rdmabench-hugepages: thp")

	if !c.InVM {
		return // turning THP off would change the host for others: only in the VM
	}
	require.NoError(t, os.WriteFile(enabled, []byte("never"), 0))
	t.Cleanup(func() { assert.NoError(t, os.WriteFile(enabled, []byte(thpChoice(string(mode))), 0)) })
	_, err = memoryPairWith(t, c, func(e *rdmalat.EndpointConfig) { e.THP = true })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RDMABENCH_HUGEPAGES=thp")
	assert.Contains(t, err.Error(), "echo madvise > "+enabled)
	t.Log(err)
}

// thpChoice is the bracketed choice of a transparent_hugepage/enabled
// line, "always [madvise] never" -> "madvise".
func thpChoice(line string) string {
	_, after, _ := strings.Cut(line, "[")
	choice, _, _ := strings.Cut(after, "]")
	return choice
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
	b := rdmalattest.NewMetricsB(t, 100)
	rdmalat.Measure(b, p, 64, 10, nil)
	assert.Positive(t, b.Metrics["p50-ns"])
	assert.Contains(t, testenv.ConfigLines(p, c), "rdmabench-odp: on")
}
