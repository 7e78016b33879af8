package jobreport

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/internal/fleet"
)

// A judgedBench is one benchmark outliers are judged on, with its rail
// ("" for results without rails) and each planned pair's figure.
type judgedBench struct {
	bench    string
	rail     string
	measures []fleet.Measure
}

// maxRails bounds the rails judged, each a verdict and a heat map: a node
// has a NIC per GPU, 8 or so, and results naming thousands of rails would
// make a report of thousands of heat maps.
const maxRails = 32

// railKey is the level of a benchmark's name that names its rail
// (rdmafleet -rails, RDMABENCH_DEVICE=a,b).
const railKey = "rail="

// railOf returns the rail a benchmark's name names ("" for none) and the
// name without that level.
func railOf(bench string) (rail, rest string) {
	parts := strings.Split(bench, "/")
	for i, p := range parts {
		if r, ok := strings.CutPrefix(p, railKey); ok && i > 0 {
			return r, strings.Join(append(parts[:i:i], parts[i+1:]...), "/")
		}
	}
	return "", bench
}

// judgedBenches returns the benchmarks outliers are judged on, among the
// results' benches: with rails one per rail, each judged on its own (a
// slow NIC spoils the pairs of its rail only, and a fast rail beside it
// would hide it in a verdict over all of them). judge is -judge: one
// that names a rail judges that rail alone; "" is the first benchmark, on
// every rail.
func judgedBenches(benches []string, judge string) []string {
	base := judge
	if base == "" {
		if len(benches) == 0 {
			return []string{""}
		}
		base = benches[0]
	}
	rail, rest := railOf(base)
	if rail != "" && judge != "" {
		return []string{judge}
	}
	var out []string
	for _, b := range benches {
		if r, other := railOf(b); r != "" && other == rest {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return []string{base}
	}
	return out
}

// heatmapName returns the heat map's file name without its extension:
// "heatmap" without rails, "heatmap-RAIL" for a rail whose name is safe
// in a file name (the results name it; a device name always is), else
// "heatmap-railN", N counting the judged benches from 1.
func heatmapName(j judgedBench, n, i int) string {
	if n == 1 || j.rail == "" {
		return "heatmap"
	}
	for _, c := range j.rail {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') || len(j.rail) > 64 {
			return fmt.Sprintf("heatmap-rail%d", i+1)
		}
	}
	if j.rail[0] == '.' {
		return fmt.Sprintf("heatmap-rail%d", i+1)
	}
	return "heatmap-" + j.rail
}

// formatRails writes, for a report of several rails, one line per rail
// before the rails' sections: where each stands, and the nodes bad on
// every rail (the node) apart from those bad on some (their NICs).
func formatRails(b *strings.Builder, judged []judgedBench, as []fleet.Analysis) {
	fmt.Fprintf(b, "rails: %d, each judged on its own (a section each below)\n", len(judged))
	bad := map[string]int{}
	var order []string
	for i, j := range judged {
		a := as[i]
		var names []string
		for _, s := range a.Suspects {
			names = append(names, s.Node)
			if bad[s.Node] == 0 {
				order = append(order, s.Node)
			}
			bad[s.Node]++
		}
		suspects := "none"
		if len(names) > 0 {
			suspects = strings.Join(names, ",")
		}
		fmt.Fprintf(b, "rail %s: %d pairs measured, %d flagged, %d failed; suspect nodes: %s\n", j.rail, a.Measured, len(a.Flagged), len(a.Failed), suspects)
	}
	for _, node := range order {
		if bad[node] == len(judged) {
			fmt.Fprintf(b, "node %s: suspect on every rail: suspect the node\n", node)
		} else {
			fmt.Fprintf(b, "node %s: suspect on %d of %d rails: suspect those rails' NICs or links\n", node, bad[node], len(judged))
		}
	}
}
