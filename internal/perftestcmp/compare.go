package perftestcmp

import (
	"fmt"
	"math"
	"slices"

	"github.com/rdmabench/rdmabench/internal/perftest"
	"github.com/rdmabench/rdmabench/internal/schedstat"
)

// A metric is one compared statistic, computed the same way for both
// sides from their raw samples (samples.go), with the column of
// perftest's own table that reports it (kept for reference). Every one is
// in microseconds, one-way where perftest halves, but stalls, a count.
type metric struct {
	name     string        // as in the table and in Figures: "p50"
	perftest perftest.Stat // perftest's printed column: t_typical; "" for none
	label    string        // that column as the table shows it
	count    bool          // a count per run, not microseconds
}

// format prints one of the metric's values: microseconds to 0.01, counts
// whole (a median of two to 0.1).
func (m metric) format(v float64) string {
	if m.count {
		if v == math.Trunc(v) {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// metrics lists the compared statistics in the order they are printed.
// perftest's printed t_max is its second-largest sample (it drops the two
// largest); the figures compared here drop none on either side.
var metrics = []metric{
	{"min", perftest.Min, "t_min", false},
	{"p50", perftest.Typical, "t_typical", false},
	{"mean", perftest.Avg, "t_avg", false},
	{"p99", perftest.P99, "99%", false},
	{"p99.9", perftest.P999, "99.9%", false},
	{"max", perftest.Max, "t_max", false},
	// stalls: samples slower than latency.StallFactor times the run's
	// median (latency.Summary.Stalls), counted alike on both sides. On
	// the soft-RoCE VM the p99 of a 4 KiB ping-pong is set by how many
	// such stalls a run of 5000 has, near the 1% a p99 looks past, so
	// the count says what a p99 ratio means.
	// perftest prints no such column.
	{"stalls", "", "-", true},
}

// Figures holds one run's statistics by metric name, in microseconds
// (stalls: a count), and "shift", how far the run's speed moved within it
// (shiftOf; not compared, it qualifies the comparison). A
// statistic the run did not report (p99.9 with under 1000 samples) is
// absent.
type Figures map[string]float64

// A Sample is one round's pair of runs for one message size.
type Sample struct {
	Round         int    // 1-based
	Tool          string // tool.name
	Size          int    // bytes
	PerftestFirst bool   // perftest ran before ours in this round
	// Perftest and Ours are computed from each side's raw samples by one
	// definition; PerftestPrinted is perftest's own table.
	Perftest, Ours  Figures
	PerftestPrinted Figures
	// PerftestSched is perftest's client's scheduler statistics (the
	// side that measures), OursSched the benchmark process's.
	PerftestSched, OursSched schedstat.Stats
	Err                      error // why a figure set is missing, if one is
}

// ratio returns ours/perftest of one statistic in this round, NaN when
// either side lacks it.
func (s Sample) ratio(name string) float64 {
	p, okP := s.Perftest[name]
	o, okO := s.Ours[name]
	if !okP || !okO || p <= 0 {
		return math.NaN()
	}
	return o / p
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
	Metric   metric
	Perftest Spread // over the rounds where both sides ran
	Ours     Spread
	Printed  Spread // perftest's own figure, for reference
	// Ratios is ours/perftest round by round (NaN where a side lacks
	// it); Paired their median.
	Ratios []float64
	Paired Spread
}

// A Target is how close to perftest one statistic must be: the paired
// ratio within 1±Tolerance.
type Target struct {
	Metric    string
	Tolerance float64
}

// DefaultTargets are the project's goals against perftest on equal
// terms: the median within 2%, the 99th percentile within 5%.
var DefaultTargets = []Target{{"p50", 0.02}, {"p99", 0.05}}

// A Judgement is a Target decided from the per-round ratios.
type Judgement struct {
	Target
	Verdict
}

// Failed reports a miss -strict fails on: missed, or nothing to judge.
func (j Judgement) Failed() bool { return j.Outcome == Missed || j.N == 0 }

// String says how the ratio stands against the target:
// "p99 1.034x [0.990, 1.080] (target ±5%, 8 rounds: undecided: ...)".
func (j Judgement) String() string {
	if j.N == 0 {
		return fmt.Sprintf("%s: no figures (target ±%g%%: NOT JUDGED)", j.Metric, j.Tolerance*100)
	}
	s := fmt.Sprintf("%s %.3fx [%s, %s] (target ±%g%%, %d rounds, p=%.3g: %s", j.Metric, j.Ratio, bound(j.Lo), bound(j.Hi), j.Tolerance*100, j.N, j.P, j.Outcome)
	if j.Outcome == Missed {
		if j.Ratio > 1 {
			s += ", ours slower"
		} else {
			s += ", ours faster"
		}
	}
	if j.Why != "" {
		s += ": " + j.Why
	}
	return s + ")"
}

func bound(v float64) string {
	if math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%.3f", v)
}

// A SizeSummary is the comparison for one tool and message size.
type SizeSummary struct {
	Tool      *Tool
	Size      int
	Samples   []Sample // in round order
	Rows      []Row    // in the order of metrics
	Judgement []Judgement
}

// Summarize aggregates samples by tool and size, in the order of tools and
// their sizes: for each statistic each side's spread over the rounds and
// the per-round ratios, then each target decided by j from those ratios.
func Summarize(samples []Sample, tools []*Tool, sizes []int, targets []Target, j pairedJudge) []SizeSummary {
	var out []SizeSummary
	for _, t := range tools {
		for _, size := range t.sizesFor(sizes) {
			if s := summarize(samples, t, size, targets, j); len(s.Samples) > 0 {
				out = append(out, s) // none: left out (a note says why)
			}
		}
	}
	return out
}

func summarize(samples []Sample, t *Tool, size int, targets []Target, j pairedJudge) SizeSummary {
	s := SizeSummary{Tool: t, Size: size}
	for _, smp := range samples {
		if smp.Size == size && smp.Tool == t.name {
			s.Samples = append(s.Samples, smp)
		}
	}
	slices.SortStableFunc(s.Samples, func(a, b Sample) int { return a.Round - b.Round })
	rows := map[string]Row{}
	for _, m := range metrics {
		r := Row{Metric: m}
		var pt, ours, printed, paired []float64
		for _, smp := range s.Samples {
			// A round counts only when both sides ran, so that
			// both spreads cover the same rounds.
			if smp.Perftest == nil || smp.Ours == nil {
				continue
			}
			if v, ok := smp.Perftest[m.name]; ok {
				pt = append(pt, v)
			}
			if v, ok := smp.Ours[m.name]; ok {
				ours = append(ours, v)
			}
			if v, ok := smp.PerftestPrinted[m.name]; ok {
				printed = append(printed, v)
			}
			rt := smp.ratio(m.name)
			r.Ratios = append(r.Ratios, rt)
			if !math.IsNaN(rt) {
				paired = append(paired, rt)
			}
		}
		r.Perftest, r.Ours, r.Printed, r.Paired = spreadOf(pt), spreadOf(ours), spreadOf(printed), spreadOf(paired)
		rows[m.name] = r
		s.Rows = append(s.Rows, r)
	}
	for _, tg := range targets {
		s.Judgement = append(s.Judgement, Judgement{Target: tg, Verdict: j.Judge(rows[tg.Metric].Ratios, tg.Tolerance)})
	}
	return s
}

// perftestFigures converts perftest's printed row (microseconds) to
// Figures.
func perftestFigures(row perftest.LatencyRow) Figures {
	f := Figures{}
	for _, m := range metrics {
		if m.perftest == "" {
			continue
		}
		if v, ok := row.Get(m.perftest); ok {
			f[m.name] = v
		}
	}
	return f
}
