//go:build linux

package rdmalat_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// retransmitUnits are rxe's hw_counters that count a packet sent again or
// met again because one was lost: the requester's retries on a timeout,
// the responder's duplicates and out-of-sequence requests, the NAKs for a
// sequence error.
var retransmitUnits = []string{
	"hw.completer_retry_err/op", "hw.duplicate_request/op", "hw.out_of_seq_request/op", "hw.rcvd_seq_err/op",
}

// addNetemLoss drops percent of the packets leaving dev until the test
// ends.
func addNetemLoss(t *testing.T, dev, loss string) {
	t.Helper()
	if out, err := exec.Command("/usr/sbin/tc", "qdisc", "add", "dev", dev, "root", "netem", "loss", loss).CombinedOutput(); err != nil {
		t.Fatalf("tc qdisc add dev %s root netem loss %s: %v: %s", dev, loss, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("/usr/sbin/tc", "qdisc", "del", "dev", dev, "root").CombinedOutput(); err != nil {
			t.Errorf("tc qdisc del dev %s root: %v: %s", dev, err, out)
		}
	})
}

// TestCountersExplainLoss: with RDMABENCH_COUNTERS, Measure reports the
// initiator's counters that rose. Across the VM's veth (rxe0 -> rxe1),
// packet loss injected with netem shows as retransmission-type counters;
// without loss none of them rises, while the packet counters always do.
func TestCountersExplainLoss(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	for _, loss := range []string{"", "5%"} {
		t.Run(fmt.Sprintf("loss=%s", loss), func(t *testing.T) {
			p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
				Endpoint: rdmalat.EndpointConfig{
					Device: c.Device, GIDIndex: c.GIDIndex, Op: spec.Write, Transport: spec.RC,
					MaxSize: 64, Inline: c.Inline, MTU: c.MTU,
				},
				PeerDevice: second, Timeout: 10 * time.Second,
			})
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, p.Close()) })
			p.Counters = true
			if loss != "" {
				addNetemLoss(t, netdevOf(t, c.Device), loss)
			}
			const n = 300
			b := rdmalattest.NewMetricsB(t, n)
			rdmalat.Measure(b, p, 64, 10, nil)
			var counted []string
			retrans := 0.0
			for unit, v := range b.Metrics {
				if strings.HasPrefix(unit, "hw.") || !strings.Contains(unit, "ns") {
					counted = append(counted, fmt.Sprintf("%s=%.4g", unit, v))
				}
				for _, r := range retransmitUnits {
					if unit == r {
						retrans += v
					}
				}
			}
			t.Logf("loss %q: %v", loss, counted)
			assert.Positive(t, b.Metrics["hw.sent_pkts/op"], "packets sent are counted")
			if loss == "" {
				assert.Zero(t, retrans, "no loss, no retransmission")
			} else {
				assert.Positive(t, retrans, "5%% loss over %d round trips: retransmissions counted", n)
			}
		})
	}
}

// fatalB is a MetricsB whose Fatal ends Measure (as testing's does) and
// keeps the message.
type fatalB struct {
	*rdmalattest.MetricsB
	fatal string
}

type fatalStop struct{}

func (b *fatalB) Fatal(args ...any) {
	b.fatal = fmt.Sprint(args...)
	panic(fatalStop{})
}

// TestMaxFailsRun: RDMABENCH_MAX's limits fail a run above them after its
// metrics are reported, with the measured figure, and pass one within.
func TestMaxFailsRun(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{Device: c.Device, GIDIndex: c.GIDIndex, MaxSize: 64, Inline: c.Inline, MTU: c.MTU},
		Timeout:  10 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	measure := func(limits string) *fatalB {
		p.Limits, err = latency.ParseLimits("RDMABENCH_MAX", limits)
		require.NoError(t, err)
		b := &fatalB{MetricsB: rdmalattest.NewMetricsB(t, 200)}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(fatalStop); !ok {
						panic(r)
					}
				}
			}()
			rdmalat.Measure(b, p, 64, 10, nil)
		}()
		return b
	}
	b := measure("p50=1ns")
	assert.Contains(t, b.fatal, "(RDMABENCH_MAX): latency: over an absolute limit: p50 ")
	assert.Contains(t, b.fatal, "> limit 1ns")
	assert.Positive(t, b.Metrics["p50-ns"], "the metrics are reported before the run fails")

	b = measure("max=1h")
	assert.Empty(t, b.fatal, "within the limit")
}
