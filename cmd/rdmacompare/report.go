package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// A Header describes the comparison for the top of the report.
type Header struct {
	Device   string
	GIDIndex int
	Iters    int
	Rounds   int
	Tools    []*tool
	// PerftestSetup and OursSetup are "key value" settings each side
	// reported, from the first round that has them, so that a mismatch
	// (MTU, inline size) shows.
	PerftestSetup []string
	OursSetup     []string
	Notes         []string // tools and sizes left out, and why
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

// Print writes the comparison: per size, each statistic of perftest next
// to ours as the median over the rounds with its spread, and the ratio of
// the medians; then the per-round figures; then one verdict line per size.
func Print(w io.Writer, h Header, sums []SizeSummary) error {
	p := &printer{w: w}
	var labels []string
	for _, t := range h.Tools {
		labels = append(labels, t.label())
	}
	p.f("perftest %s on %s (GID index %d), %d iterations each, %d rounds interleaved\n",
		strings.Join(labels, "; "), h.Device, h.GIDIndex, h.Iters, h.Rounds)
	p.f("microseconds; median over the rounds [min..max across rounds]; ratio = ours/perftest of the medians\n")
	if len(h.PerftestSetup) > 0 {
		p.f("perftest setup: %s\n", strings.Join(h.PerftestSetup, ", "))
	}
	if len(h.OursSetup) > 0 {
		p.f("ours setup:     %s\n", strings.Join(h.OursSetup, ", "))
	}
	for _, n := range h.Notes {
		p.f("note: %s\n", n)
	}
	for _, s := range sums {
		p.f("\n%s, size %d B (both sides ran in %d of %d rounds): %s\n", s.Tool.label(), s.Size, completeRounds(s.Samples), len(s.Samples), s.Tool.latencyKind())
		p.f("  %-10s %9s  %-21s  %-6s %9s  %-21s  %s\n",
			"perftest", "median", "range", "ours", "median", "range", "ours/perftest")
		for _, r := range s.Rows {
			p.f("  %-10s %9s  %-21s  %-6s %9s  %-21s  %s\n",
				r.Metric.label, median(r.Perftest), spreadRange(r.Perftest),
				r.Metric.name, median(r.Ours), spreadRange(r.Ours),
				ratio(r.Ratio))
		}
		p.f("  per round (perftest | ours):\n")
		p.f("  %5s %-8s", "round", "first")
		for _, m := range metrics {
			p.f(" %9s", m.label)
		}
		p.f(" |")
		for _, m := range metrics {
			p.f(" %9s", m.name)
		}
		p.f("\n")
		for _, smp := range s.Samples {
			first := "ours"
			if smp.PerftestFirst {
				first = "perftest"
			}
			p.f("  %5d %-8s", smp.Round, first)
			for _, m := range metrics {
				p.f(" %9s", figure(smp.Perftest, m.name))
			}
			p.f(" |")
			for _, m := range metrics {
				p.f(" %9s", figure(smp.Ours, m.name))
			}
			p.f("\n")
			if smp.Err != nil {
				p.f("        error: %s\n", strings.ReplaceAll(smp.Err.Error(), "\n", "\n        "))
			}
		}
	}
	p.f("\nt_max is perftest's second-largest sample, max ours the largest; perftest has no warm-up.\n")
	p.f("a target is MISSED when the ratio is outside it and the U test over the rounds finds the sides differ (p < %g)\n", Alpha)
	for _, s := range sums {
		var parts []string
		for _, j := range s.Judgement {
			parts = append(parts, j.String())
		}
		p.f("verdict %s size %d: %s\n", s.Tool.name, s.Size, strings.Join(parts, "; "))
	}
	return p.err
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

func median(s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", s.Median)
}

func spreadRange(s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("[%.2f..%.2f]", s.Min, s.Max)
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

// printer keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
