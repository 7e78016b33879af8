//go:build linux

package rdmalat_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/verbs"
)

// iWARP on soft-iWARP (siw) in the VM: rxevm -siw adds siw0 and siw1 and
// tells the program (RXEVM_SIW=1); make test-vm runs TestIWARP* that way.
// What iWARP has (RC write, read and send, connected by rdma_cm) runs on
// one device and across the two; what it lacks is refused with the reason.

// mustHaveSIW returns siw0 and siw1 under rxevm -siw, fails when it
// promised them and they are missing, and skips elsewhere.
func mustHaveSIW(t *testing.T) (string, string) {
	t.Helper()
	if os.Getenv("RXEVM_SIW") != "1" {
		t.Skip("skipping test: no soft-iWARP device: run it under rxevm -siw (make test-vm does)")
	}
	for _, d := range []string{"siw0", "siw1"} {
		ctx, err := verbs.Open(d)
		require.NoError(t, err, "rxevm -siw promised %s", d)
		require.Equal(t, verbs.NodeRNIC, ctx.NodeType(), "%s is iWARP", d)
		require.NoError(t, ctx.Close())
	}
	return "siw0", "siw1"
}

func newSIWPair(t *testing.T, dev, peerDev string, v variant) *rdmalat.Pair {
	t.Helper()
	start := time.Now()
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint:   rdmalat.EndpointConfig{Device: dev, Op: v.op, Transport: v.tr, CM: true, MaxSize: 4096, Inline: rdmalat.InlinePerftest},
		PeerDevice: peerDev, Timeout: 10 * time.Second,
	})
	require.NoError(t, err, "%v", v)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	t.Logf("%v on %s: pair built in %v, rdma_cm connect %v", v, dev, time.Since(start).Round(time.Millisecond), p.Local.CMSetupTime().Round(time.Millisecond))
	return p
}

// TestIWARPOnSIW: RC write, read and send through rdma_cm run on siw0
// alone and from siw0 to siw1, every sample checked by the loops, with
// latencies that make sense for TCP under emulation (above a microsecond,
// below 50 ms at the median).
func TestIWARPOnSIW(t *testing.T) {
	dev, second := mustHaveSIW(t)
	for _, peerDev := range []string{"", second} {
		for _, v := range []variant{{spec.Write, spec.RC, false}, {spec.Read, spec.RC, false}, {spec.Send, spec.RC, false}} {
			t.Run(v.String()+"/peer="+peerDev, func(t *testing.T) {
				p := newSIWPair(t, dev, peerDev, v)
				if peerDev != "" {
					require.Equal(t, second, p.PeerDevice.Name)
				}
				for _, size := range []int{2, 4096} {
					rec, _ := runSamples(t, p, size, 5, 50)
					s := rec.Summary()
					assert.Equal(t, int64(51), s.Count) // AllocsPerRun runs once more first
					p50 := quantile(s, 500000)
					assert.Greater(t, p50, 1e3, "p50 ns")
					assert.Less(t, p50, 50e6, "p50 ns")
					t.Logf("%v size %d: p50 %.1f us, p90 %.1f us", v, size, p50/1e3, quantile(s, 900000)/1e3)
				}
			})
		}
	}
	assertNoCMObjects(t)
}

// TestIWARPReadReturnsPeerBytes: READ on siw brings the peer's bytes (the
// initiator's buffer takes the READ response, a tagged write on iWARP).
func TestIWARPReadReturnsPeerBytes(t *testing.T) {
	dev, second := mustHaveSIW(t)
	p := newSIWPair(t, dev, second, variant{spec.Read, spec.RC, false})
	peerBuf := rdmalat.PeerReceiveHalf(p)
	for i := range peerBuf {
		peerBuf[i] = byte(i*7 + 3)
	}
	runSamples(t, p, 4096, 0, 10)
	assert.Equal(t, peerBuf, rdmalat.LocalSendHalf(p))
}

// TestIWARPRefusals: what iWARP lacks is refused on siw0 before any queue
// pair is made, naming the device, the reason and what to set.
func TestIWARPRefusals(t *testing.T) {
	dev, _ := mustHaveSIW(t)
	for _, tc := range []struct {
		name string
		cfg  rdmalat.EndpointConfig
		want string
	}{
		{"UC", rdmalat.EndpointConfig{Op: spec.Write, Transport: spec.UC}, "iWARP has reliable connections only, no UC: set RDMABENCH_TRANSPORT=rc"},
		{"UD", rdmalat.EndpointConfig{Op: spec.Send, Transport: spec.UD, CM: true}, "iWARP has reliable connections only, no UD: set RDMABENCH_TRANSPORT=rc"},
		{"fetch-add", rdmalat.EndpointConfig{Op: spec.FetchAdd, Transport: spec.RC, CM: true}, "iWARP has no atomic operations"},
		{"compare-swap", rdmalat.EndpointConfig{Op: spec.CompareSwap, Transport: spec.RC, CM: true}, "iWARP has no atomic operations"},
		{"RC without rdma_cm", rdmalat.EndpointConfig{Op: spec.Write, Transport: spec.RC}, "its queue pairs connect over TCP, which needs rdma_cm: set RDMABENCH_CM=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Device, cfg.MaxSize = dev, 64
			start := time.Now()
			p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{Endpoint: cfg, Timeout: 10 * time.Second})
			if p != nil {
				p.Close()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, rdmalat.ErrIWARP)
			assert.ErrorIs(t, err, errors.ErrUnsupported)
			assert.Contains(t, err.Error(), "siw0 is an iWARP device")
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, time.Since(start), 2*time.Second, "refused before connecting")
		})
	}
}
