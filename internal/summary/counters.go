package summary

import (
	"slices"
	"strings"
)

// The NIC counters a run reports with RDMABENCH_COUNTERS=1 (rdma-counters:
// on) are metrics per operation, "hw.completer_retry_err/op"; a counter
// absent from such a run did not change. The table sets those that
// explain a tail (retransmissions, sequence errors, RNR NAKs, congestion
// notifications, port errors and discards) beside the stalls; the traffic
// counters (packets, bytes), which rise in every run, are left to benchstat.

// countersOn is the config line that says a run read its counters.
const countersOn = "on"

// counterName returns the counter a metric unit reports and whether the
// unit is one the table shows: a hardware counter ("hw." prefix) other
// than a traffic one, or a port counter of errors, discards, drops, link
// downs or waits. The other "/op" units (ns/op, B/op, allocs/op,
// user-insns/op) are no counters.
func counterName(unit string) (string, bool) {
	name, ok := strings.CutSuffix(unit, "/op")
	if !ok || name == "" || strings.ContainsAny(name, " -") {
		return "", false
	}
	if isTraffic(name) {
		return "", false
	}
	if strings.HasPrefix(name, "hw.") {
		return name, true
	}
	for _, w := range []string{"err", "discard", "drop", "downed", "wait"} {
		if strings.Contains(name, w) {
			return name, true
		}
	}
	return "", false
}

// isTraffic reports whether a counter counts traffic (packets or bytes),
// which every run moves: sent_pkts, rcvd_pkts, port_xmit_packets,
// port_rcv_data, unicast_xmit_packets.
func isTraffic(name string) bool {
	for _, w := range []string{"pkts", "packets", "_data", "bytes"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// counterColumns returns the counter columns of f: every counter unit
// that rose in a run that read its counters, by name.
func counterColumns(f *File) []Metric {
	var names []string
	for _, r := range f.Runs {
		if r.Config["rdma-counters"] != countersOn {
			continue
		}
		for unit, v := range r.Values {
			if name, ok := counterName(unit); ok && v > 0 && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	cols := make([]Metric, len(names))
	for i, n := range names {
		cols[i] = Metric{Unit: n + "/op", Label: n + "/op", Counter: true}
	}
	return cols
}

// counterValue returns a counter column's value in run r: its metric, 0
// when a run that read its counters does not report it (it did not
// change), and false when r did not read them.
func counterValue(r Run, m Metric) (float64, bool) {
	if r.Config["rdma-counters"] != countersOn {
		return 0, false
	}
	return r.Values[m.Unit], true // absent: 0, it did not rise
}
