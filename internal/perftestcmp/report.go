package perftestcmp

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/sticky"
	"github.com/rdmabench/rdmabench/latency"
)

// A Header describes the comparison for the top of the report.
type Header struct {
	Device   string
	GIDIndex int
	Iters    int
	Rounds   int
	Tools    []*Tool
	// PerftestSetup and OursSetup are "key value" settings each side
	// reported, from the first round that has them, so that a mismatch
	// (MTU, inline size) shows.
	PerftestSetup []string
	OursSetup     []string
	Notes         []string // tools and sizes left out, and why
	CPUs          [2]int   // initiator, responder
	PinPerftest   bool
	Warmup        int
}

// perftestSetupKeys are the lines of perftest's parameter block shown in
// the header; oursSetupKeys the benchmark's configuration lines.
var (
	perftestSetupKeys = []string{"Device", "Link type", "GID index", "Mtu", "Max inline data", "Connection type"}
	oursSetupKeys     = []string{"rdma-device", "rdma-gid-index", "rdma-gid-type", "rdma-mtu", "rdma-inline-max", "rdma-transport", "rdmabench-warmup", "rdmabench-cpus"}
)

// setupOf returns "key value" for each of keys that m has, in order.
func setupOf(m map[string]string, keys []string) []string {
	var out []string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out = append(out, k+" "+v)
		}
	}
	return out
}

// Print writes the comparison: per size, each statistic of both sides
// as the median over the rounds with its range, the paired ratio (median
// of the per-round ratios) with its range, and perftest's printed figure;
// then each round's p50 and p99 and what the scheduler did; then one
// verdict line per size.
func Print(w io.Writer, h Header, sums []SizeSummary) error {
	p := &sticky.Printer{W: w}
	var labels []string
	for _, t := range h.Tools {
		labels = append(labels, t.label())
	}
	p.Printf("perftest %s on %s (GID index %d), %d iterations each, %d rounds, each side back to back, order alternating\n",
		strings.Join(labels, "; "), h.Device, h.GIDIndex, h.Iters, h.Rounds)
	pin := fmt.Sprintf("perftest's client on CPU %d and server on %d", h.CPUs[0], h.CPUs[1])
	if !h.PinPerftest {
		pin = "perftest unpinned (-pin=false)"
	}
	p.Printf("CPUs: our initiator on %d and responder on %d, %s; warm-up: first %d samples of each run dropped on both sides\n", h.CPUs[0], h.CPUs[1], pin, h.Warmup)
	p.Printf("microseconds; both sides' figures from their raw samples by one definition (latency.Recorder); median over the rounds [min..max];\n")
	p.Printf("stalls = samples above %d times their run's median, a count per run (perftest prints none)\n", latency.StallFactor)
	p.Printf("ratio = ours/perftest per round, its median [min..max]; printed = perftest's own table (drops its 2 largest samples), for reference\n")
	if len(h.PerftestSetup) > 0 {
		p.Printf("perftest setup: %s\n", strings.Join(h.PerftestSetup, ", "))
	}
	if len(h.OursSetup) > 0 {
		p.Printf("ours setup:     %s\n", strings.Join(h.OursSetup, ", "))
	}
	for _, n := range h.Notes {
		p.Printf("note: %s\n", n)
	}
	for _, s := range sums {
		p.Printf("\n%s, size %d B (both sides ran in %d of %d rounds): %s\n", s.Tool.label(), s.Size, completeRounds(s.Samples), len(s.Samples), s.Tool.latencyKind())
		p.Printf("  %-6s %9s  %-21s %9s  %-21s %8s  %-17s  %-9s %9s\n",
			"", "perftest", "range", "ours", "range", "ratio", "range", "printed", "")
		for _, r := range s.Rows {
			p.Printf("  %-6s %9s  %-21s %9s  %-21s %8s  %-17s  %-9s %9s\n",
				r.Metric.name, median(r.Metric, r.Perftest), spreadRange(r.Metric, r.Perftest),
				median(r.Metric, r.Ours), spreadRange(r.Metric, r.Ours),
				medianRatio(r.Paired), ratioRange(r.Paired), r.Metric.label, median(r.Metric, r.Printed))
		}
		p.Printf("  per round: p50 and p99 of each side, their ratios, scheduler migrations/preemptions/preemptions of pinned threads (perftest's client | our process; -sched, else -)\n")
		p.Printf("  %5s %-8s %9s %9s | %9s %9s | %7s %7s | %s\n", "round", "first", "pt p50", "pt p99", "ours p50", "ours p99", "p50", "p99", "sched")
		for _, smp := range s.Samples {
			first := "ours"
			if smp.PerftestFirst {
				first = "perftest"
			}
			p.Printf("  %5d %-8s %9s %9s | %9s %9s | %7s %7s | %s | %s\n", smp.Round, first,
				figure(smp.Perftest, "p50"), figure(smp.Perftest, "p99"), figure(smp.Ours, "p50"), figure(smp.Ours, "p99"),
				ratio(smp.ratio("p50")), ratio(smp.ratio("p99")), smp.PerftestSched, smp.OursSched)
			if smp.Err != nil {
				p.Printf("        error: %s\n", strings.ReplaceAll(smp.Err.Error(), "\n", "\n        "))
			}
		}
		p.Printf("  %s\n", steadinessLine(s.Samples))
	}
	if w := steadinessWarning(sums); w != "" {
		p.Printf("\n%s\n", w)
	}
	ta := abtest.DefaultThresholds.TargetAlpha
	p.Printf("\nverdicts: abtest's paired %s on the per-round ratios (rdmaab's); met when the %g%% interval of the typical (Hodges-Lehmann) ratio lies within the target, MISSED when the sides differ (p < %g) and the ratio lies outside it, undecided otherwise\n",
		abtest.DefaultThresholds.Method, 100*(1-ta), ta)
	for _, s := range sums {
		var parts []string
		for _, j := range s.Judgement {
			parts = append(parts, j.String())
		}
		p.Printf("verdict %s size %d: %s\n", s.Tool.name, s.Size, strings.Join(parts, "; "))
	}
	return p.Err
}

// completeRounds counts the samples that have both sides.
func completeRounds(samples []Sample) int {
	n := 0
	for _, s := range samples {
		if s.Perftest != nil && s.Ours != nil {
			n++
		}
	}
	return n
}

func median(m metric, s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return m.format(s.Median)
}

func spreadRange(m metric, s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return "[" + m.format(s.Min) + ".." + m.format(s.Max) + "]"
}

func medianRatio(s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3fx", s.Median)
}

func ratioRange(s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("[%.3f..%.3f]", s.Min, s.Max)
}

func ratio(r float64) string {
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%.3fx", r)
}

func figure(f Figures, name string) string {
	v, ok := f[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
