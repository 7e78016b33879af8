package summary

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCountersBesideStalls: a results file of RDMABENCH_COUNTERS=1 runs
// (testdata/counters.txt, written with the counters rxe reports and the
// rates rdmalat's TestCountersExplainLoss measured at 5% netem loss, about
// 0.1 retries and 0.083 duplicate requests per operation, in five of six
// runs; the sixth without loss reports only the traffic counters) gets a
// column per counter that rose, beside the stalls. Traffic counters and
// other per-op units are left out; a benchmark whose runs did not read
// counters shows "-".
func TestCountersBesideStalls(t *testing.T) {
	f, err := ReadFile("testdata/counters.txt")
	require.NoError(t, err)
	tab := Summarize(f, DefaultOptions)
	var labels []string
	for _, m := range tab.Counters {
		labels = append(labels, m.Label)
	}
	assert.Equal(t, []string{"hw.completer_retry_err/op", "hw.duplicate_request/op", "hw.out_of_seq_request/op"}, labels,
		"the counters that rose, by name; not sent_pkts, rcvd_pkts, port_xmit_packets (traffic) nor user-insns/op")
	require.Len(t, tab.Rows, 2)
	w := tab.Rows[0]
	// Retries 0.1, 0.08, 0.12, 0.09, 0.11 and 0 (absent: no change) sort
	// to 0, 0.08, 0.09, 0.1, 0.11, 0.12: median 0.095; six values at 95%
	// give their range, 0 to 0.12.
	s := w.Cells["hw.completer_retry_err/op"]
	assert.InDelta(t, 0.095, s.Center, 1e-12)
	assert.InDelta(t, 0, s.Lo, 1e-12)
	assert.InDelta(t, 0.12, s.Hi, 1e-12)
	assert.Equal(t, "0.095 (0–0.12)", formatCell(tab.Counters[0], s))
	// out_of_seq_request rose in one run: median 0.
	assert.InDelta(t, 0, w.Cells["hw.out_of_seq_request/op"].Center, 1e-12)
	assert.Empty(t, w.Partial, "every run read its counters")
	_, ok := tab.Rows[1].Cells["hw.completer_retry_err/op"]
	assert.False(t, ok, "RDMARead's runs did not read counters: no cell, not 0")

	var b strings.Builder
	require.NoError(t, tab.Format(&b))
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	var head, write, read string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "benchmark"):
			head = l
		case strings.HasPrefix(l, "RDMAWrite"):
			write = l
		case strings.HasPrefix(l, "RDMARead"):
			read = l
		}
	}
	assert.Regexp(t, `stalls  hw\.completer_retry_err/op  hw\.duplicate_request/op  hw\.out_of_seq_request/op$`, head, "the counters beside the stalls")
	// Stalls 30, 24, 36, 27, 33, 0: median 28.5, range 0-36. Duplicates
	// 0, 0.07, 0.0767, 0.0833, 0.09, 0.1 sorted: median 0.08.
	assert.Regexp(t, `28\.5 \(0–36\)\s+0\.095 \(0–0\.12\)\s+0\.08 \(0–0\.1\)\s+0 \(0–0\.0033\)$`, write)
	assert.Regexp(t, `1 \(∞\)\s+-\s+-\s+-$`, read)
	assert.Contains(t, out, "counters: each NIC counter's change per operation (RDMABENCH_COUNTERS=1)")

	// Without counters the table is as before: no column, no footnote.
	f, err = ReadFile("testdata/bench.txt")
	require.NoError(t, err)
	assert.Empty(t, Summarize(f, DefaultOptions).Counters)
}

func TestCounterName(t *testing.T) {
	for unit, want := range map[string]string{
		"hw.rcvd_seq_err/op":    "hw.rcvd_seq_err",
		"hw.np_cnp_sent/op":     "hw.np_cnp_sent",
		"port_rcv_errors/op":    "port_rcv_errors",
		"port_xmit_discards/op": "port_xmit_discards",
		"port_xmit_wait/op":     "port_xmit_wait",
		"hw.sent_pkts/op":       "",
		"port_rcv_data/op":      "",
		"port_xmit_packets/op":  "",
		"ns/op":                 "",
		"sec/op":                "",
		"B/op":                  "",
		"allocs/op":             "",
		"user-insns/op":         "",
		"hw.rcvd_seq_err":       "",
		"stalls":                "",
		"/op":                   "",
	} {
		got, ok := counterName(unit)
		assert.Equal(t, want, got, unit)
		assert.Equal(t, want != "", ok, unit)
	}
}
