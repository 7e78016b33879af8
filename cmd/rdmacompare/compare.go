package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/rdmabench/rdmabench/internal/perftest"
	"golang.org/x/perf/benchmath"
)

// A metric pairs one of perftest's statistics with the benchmark metric
// that measures the same thing. Every one is a one-way latency: perftest's
// ib_write_lat halves each round trip, and so does BenchmarkRDMAWrite.
type metric struct {
	name     string        // our name, as in the table: "p50"
	perftest perftest.Stat // perftest's column: t_typical
	label    string        // perftest's column as the table shows it
	unit     string        // the unit BenchmarkRDMAWrite reports it in
}

// metrics lists the compared statistics in the order they are printed.
// perftest's t_max is its second-largest sample (it drops the two largest),
// ours the largest: the max row is shown, not judged.
var metrics = []metric{
	{"min", perftest.Min, "t_min", "min-ns"},
	{"p50", perftest.Typical, "t_typical", "p50-ns"},
	{"mean", perftest.Avg, "t_avg", "ns/op"},
	{"p99", perftest.P99, "99%", "p99-ns"},
	{"p99.9", perftest.P999, "99.9%", "p99.9-ns"},
	{"max", perftest.Max, "t_max", "max-ns"},
}

// Figures holds one run's statistics by metric name, in microseconds. A
// statistic the run did not report (p99.9 with under 1000 samples) is
// absent.
type Figures map[string]float64

// A Sample is one round's pair of runs for one message size.
type Sample struct {
	Round         int    // 1-based
	Tool          string // tool.name
	Size          int    // bytes
	PerftestFirst bool   // perftest ran before ours in this round
	Perftest      Figures
	Ours          Figures
	Err           error // why a figure set is missing, if one is
}

// A Spread summarizes one statistic over the rounds.
type Spread struct {
	N                int // rounds that had the statistic
	Median, Min, Max float64
}

// spreadOf returns the median, minimum and maximum of xs. The median of an
// even count is the mean of the middle two. N is 0 when xs is empty.
func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread{N: n, Median: med, Min: s[0], Max: s[n-1]}
}

// A Row is one compared statistic for one size.
type Row struct {
	Metric         metric
	Perftest, Ours Spread
	// Ratio is ours/perftest of the medians; NaN when either side has no
	// figure or perftest's median is 0.
	Ratio float64
}

// A Target is how close to perftest one statistic must be: the ratio of
// the medians within 1±Tolerance.
type Target struct {
	Metric    string
	Tolerance float64
}

// DefaultTargets are the project's goals: the median within 5% of
// perftest's t_typical, the 99th percentile within 10% of its 99%.
var DefaultTargets = []Target{{"p50", 0.05}, {"p99", 0.10}}

// A Judgement is a Target applied to one size: the ratio of the medians
// against the tolerance, and the Mann-Whitney U test over the rounds
// (benchmath, as benchstat uses it) for whether the two sides differ at
// all. A ratio outside the tolerance is a miss only when the test finds
// the difference significant; otherwise the rounds cannot tell.
type Judgement struct {
	Target
	Ratio float64 // NaN when there was nothing to compare
	Cmp   benchmath.Comparison
}

// Alpha is the significance level of the verdict's U test.
const Alpha = 0.05

// judge compares the per-round figures of one statistic.
func judge(t Target, ratio float64, pt, ours []float64) Judgement {
	j := Judgement{Target: t, Ratio: ratio}
	if len(pt) > 0 && len(ours) > 0 {
		th := benchmath.Thresholds{CompareAlpha: Alpha}
		j.Cmp = benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(pt), &th), benchmath.NewSample(slices.Clone(ours), &th))
	}
	return j
}

// Within reports whether the ratio is within the target.
func (j Judgement) Within() bool {
	return !math.IsNaN(j.Ratio) && math.Abs(j.Ratio-1) <= j.Tolerance+1e-12
}

// Significant reports whether the U test finds the sides differ.
func (j Judgement) Significant() bool { return j.Cmp.N1 > 0 && j.Cmp.P < j.Cmp.Alpha }

// Met reports whether the target is met: the ratio within it.
func (j Judgement) Met() bool { return j.Within() }

// Failed reports a miss -strict fails on: outside the target and
// significant, or nothing to judge.
func (j Judgement) Failed() bool {
	return math.IsNaN(j.Ratio) || !j.Within() && j.Significant()
}

// String says how the ratio stands against the target:
// "p99 1.234x (target ±10%: MISSED, ours slower; p=0.002 n=6)".
func (j Judgement) String() string {
	if math.IsNaN(j.Ratio) {
		return fmt.Sprintf("%s: no figures (target ±%g%%: NOT JUDGED)", j.Metric, j.Tolerance*100)
	}
	side := "ours slower"
	if j.Ratio < 1 {
		side = "ours faster"
	}
	var verdict string
	switch {
	case j.Within():
		verdict = "met"
	case j.Significant():
		verdict = "MISSED, " + side
	default:
		verdict = "unclear: outside, " + side + ", but not significant"
		for _, w := range j.Cmp.Warnings {
			verdict += " (" + w.Error() + ")"
		}
	}
	return fmt.Sprintf("%s %.3fx (target ±%g%%: %s; %s)", j.Metric, j.Ratio, j.Tolerance*100, verdict, j.Cmp)
}

// A SizeSummary is the comparison for one tool and message size.
type SizeSummary struct {
	Tool      *tool
	Size      int
	Samples   []Sample // in round order
	Rows      []Row    // in the order of metrics
	Judgement []Judgement
}

// Summarize aggregates samples by tool and size, in the order of tools and
// their sizes: for each statistic the spread of each side over the rounds
// and the ratio of the medians, then each target judged on that ratio and
// on the rounds' figures.
func Summarize(samples []Sample, tools []*tool, sizes []int, targets []Target) []SizeSummary {
	var out []SizeSummary
	for _, t := range tools {
		for _, size := range t.sizesFor(sizes) {
			if s := summarize(samples, t, size, targets); len(s.Samples) > 0 {
				out = append(out, s) // none: left out (a note says why)
			}
		}
	}
	return out
}

func summarize(samples []Sample, t *tool, size int, targets []Target) SizeSummary {
	s := SizeSummary{Tool: t, Size: size}
	for _, smp := range samples {
		if smp.Size == size && smp.Tool == t.name {
			s.Samples = append(s.Samples, smp)
		}
	}
	slices.SortStableFunc(s.Samples, func(a, b Sample) int { return a.Round - b.Round })
	type perRound struct{ pt, ours []float64 }
	figs := map[string]perRound{}
	ratios := map[string]float64{}
	for _, m := range metrics {
		var pt, ours []float64
		for _, smp := range s.Samples {
			// A round counts only when both sides ran, so that
			// the two medians cover the same rounds.
			if smp.Perftest == nil || smp.Ours == nil {
				continue
			}
			p, okP := smp.Perftest[m.name]
			o, okO := smp.Ours[m.name]
			if okP {
				pt = append(pt, p)
			}
			if okO {
				ours = append(ours, o)
			}
		}
		r := Row{Metric: m, Perftest: spreadOf(pt), Ours: spreadOf(ours), Ratio: math.NaN()}
		if r.Perftest.N > 0 && r.Ours.N > 0 && r.Perftest.Median > 0 {
			r.Ratio = r.Ours.Median / r.Perftest.Median
		}
		ratios[m.name] = r.Ratio
		figs[m.name] = perRound{pt, ours}
		s.Rows = append(s.Rows, r)
	}
	for _, tg := range targets {
		ratio, ok := ratios[tg.Metric]
		if !ok {
			ratio = math.NaN()
		}
		s.Judgement = append(s.Judgement, judge(tg, ratio, figs[tg.Metric].pt, figs[tg.Metric].ours))
	}
	return s
}

// perftestFigures converts a perftest result row (microseconds) to Figures.
func perftestFigures(row perftest.LatencyRow) Figures {
	f := Figures{}
	for _, m := range metrics {
		if v, ok := row.Get(m.perftest); ok {
			f[m.name] = v
		}
	}
	return f
}
