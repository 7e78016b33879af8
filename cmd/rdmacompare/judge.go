package main

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// The verdict on a target comes from the per-round ratios ours/perftest of
// one statistic: each round runs both sides back to back, so a ratio
// cancels what the host did to that round, and the judge sees one paired
// difference per round instead of two clouds of figures.

// An Outcome is a judge's decision on one target.
type Outcome int

const (
	Undecided Outcome = iota // the interval straddles a bound: more rounds
	Met                      // the interval lies within the target
	Missed                   // the interval lies outside the target
)

func (o Outcome) String() string {
	return [...]string{"undecided", "met", "MISSED"}[o]
}

// A Verdict is a judge's answer for one statistic of one size.
type Verdict struct {
	N      int     // rounds with a ratio
	Ratio  float64 // the ratios' center; NaN with none
	Lo, Hi float64 // its confidence interval (±Inf when too few rounds)
	Outcome
	Why string // for Undecided: what would decide it
}

// A pairedJudge decides a target (the ratio within 1±tolerance) from
// per-round ratios ours/perftest.
type pairedJudge interface {
	Judge(ratios []float64, tolerance float64) Verdict
}

// medianJudge is the judge until internal/abtest's paired judge, shared
// with rdmaab, takes its place: benchmath's distribution-free interval of
// the median ratio at Confidence; met when the whole interval lies within
// the target, missed when it lies wholly outside, undecided otherwise.
type medianJudge struct{ Confidence float64 }

func (j medianJudge) Judge(ratios []float64, tolerance float64) Verdict {
	rs := slices.DeleteFunc(slices.Clone(ratios), func(r float64) bool { return math.IsNaN(r) || math.IsInf(r, 0) })
	v := Verdict{N: len(rs), Ratio: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	if len(rs) == 0 {
		v.Why = "no round had both sides"
		return v
	}
	th := benchmath.DefaultThresholds
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(rs, &th), j.Confidence)
	v.Ratio, v.Lo, v.Hi = s.Center, s.Lo, s.Hi
	lo, hi := 1-tolerance-1e-12, 1+tolerance+1e-12
	switch {
	case v.Lo >= lo && v.Hi <= hi:
		v.Outcome = Met
	case v.Hi < lo || v.Lo > hi:
		v.Outcome = Missed
	case len(s.Warnings) > 0:
		v.Why = s.Warnings[0].Error()
	default:
		v.Why = fmt.Sprintf("the interval straddles %.3f or %.3f: more rounds (-rounds)", 1-tolerance, 1+tolerance)
	}
	return v
}

// defaultJudge is the judge run uses.
var defaultJudge pairedJudge = medianJudge{Confidence: 0.95}
