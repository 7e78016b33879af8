package perftestcmp

import (
	"fmt"
	"math"

	"github.com/rdmabench/rdmabench/internal/abtest"
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
	P      float64 // the test's two-sided p-value that the ratio is 1
	Outcome
	Why string // for Undecided: what would decide it
}

// A pairedJudge decides a target (the ratio within 1±tolerance) from
// per-round ratios ours/perftest (NaN where a round lacks the statistic).
type pairedJudge interface {
	Judge(ratios []float64, tolerance float64) Verdict
}

// abtestJudge is rdmaab's paired judge (internal/abtest) applied once to
// all the rounds: its default paired test, Wilcoxon's signed-rank test on
// the per-round log ratios, with the exact interval of the Hodges-Lehmann
// ratio at 1-Alpha. Met when that
// interval lies within the target (abtest's "same": 1/(1+t) to 1+t),
// MISSED when the test finds the sides differ and the ratio lies outside
// it, undecided otherwise (more rounds, or a host quiet enough for them to
// agree).
type abtestJudge struct{ rule abtest.SequentialRule }

func (j abtestJudge) Judge(ratios []float64, tolerance float64) Verdict {
	var rounds []abtest.Round
	for _, r := range ratios {
		if !math.IsNaN(r) && !math.IsInf(r, 0) && r > 0 {
			rounds = append(rounds, abtest.Round{Old: 1, New: r})
		}
	}
	v := Verdict{N: len(rounds), Ratio: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	if len(rounds) == 0 {
		v.Why = "no round had both sides"
		return v
	}
	rule := j.rule
	rule.Threshold = tolerance
	f := rule.Decide([]string{"ratio"}, [][]float64{abtest.LogRatios(rounds)})[0]
	res := f.Result
	v.Ratio, v.Lo, v.Hi, v.P = res.Ratio, res.Lo, res.Hi, res.P
	lo, hi := 1/(1+tolerance), 1+tolerance
	switch {
	case res.N < rule.MinRounds:
		v.Why = fmt.Sprintf("%d rounds, the judge decides from %d", res.N, rule.MinRounds)
	case res.Lo >= lo && res.Hi <= hi:
		v.Outcome = Met
	case f.Decision == abtest.Different && (res.Ratio > hi || res.Ratio < lo):
		v.Outcome = Missed
	default:
		v.Why = fmt.Sprintf("the interval reaches outside %.3f..%.3f and p=%.3g: more rounds (-rounds)", lo, hi, res.P)
	}
	return v
}

// defaultJudge is the judge run uses: abtest.DefaultThresholds' target
// rule (one look, as the rounds are fixed in advance).
var defaultJudge pairedJudge = abtestJudge{abtest.DefaultThresholds.TargetRule()}
