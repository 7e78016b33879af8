package abtest

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// A Round is one old value and one new value measured back to back (a
// turn of each side in a duet, or one interleaved pair of runs): both saw
// the same state of the machine, so their ratio cancels it.
type Round struct{ Old, New float64 }

// LogRatios returns log(new/old) of each round, in order, leaving out
// rounds where either value is not positive (no ratio to take).
func LogRatios(rounds []Round) []float64 {
	out := make([]float64, 0, len(rounds))
	for _, r := range rounds {
		if r.Old > 0 && r.New > 0 && !math.IsInf(r.Old, 0) && !math.IsInf(r.New, 0) {
			out = append(out, math.Log(r.New/r.Old))
		}
	}
	return out
}

// A PairedMethod tests whether paired log ratios are centred on 0.
type PairedMethod int

const (
	// SignTest counts the rounds where new was above old against a fair
	// coin (the binomial distribution): it assumes nothing of the ratios'
	// spread, so a round cut in two by a change of the machine's speed
	// counts once, however far off it is. Its estimate is the median
	// ratio with its distribution-free interval.
	SignTest PairedMethod = iota
	// TTest is Student's one-sample t-test on the log ratios: it uses
	// their sizes, so it needs fewer rounds where they are near normal,
	// and outliers widen it. Its estimate is the geometric mean ratio.
	TTest
	// SignedRank is Wilcoxon's signed-rank test on the log ratios, exact:
	// it uses the order of their sizes, not the sizes, so one wild round
	// weighs no more than the largest ordinary one. Its estimate is the
	// Hodges-Lehmann median of the pairwise averages, with its exact
	// interval.
	SignedRank
)

func (m PairedMethod) String() string {
	switch m {
	case SignTest:
		return "sign test"
	case TTest:
		return "paired t-test"
	case SignedRank:
		return "signed-rank test"
	}
	return fmt.Sprintf("PairedMethod(%d)", int(m))
}

// Flag is the method's name as ParsePairedMethod reads it.
func (m PairedMethod) Flag() string {
	switch m {
	case SignTest:
		return "sign"
	case TTest:
		return "t"
	}
	return "rank"
}

// ParsePairedMethod reads "sign", "t" or "rank".
func ParsePairedMethod(s string) (PairedMethod, error) {
	switch s {
	case "sign":
		return SignTest, nil
	case "t", "ttest":
		return TTest, nil
	case "rank", "signed-rank", "wilcoxon":
		return SignedRank, nil
	}
	return 0, fmt.Errorf("paired method %q: want rank (Wilcoxon signed-rank test of the per-round log ratios), sign (sign test) or t (paired t-test of the logs)", s)
}

// A PairedResult is one paired comparison: the typical new/old ratio, its
// interval and the test's two-sided p-value.
type PairedResult struct {
	Method     PairedMethod
	N          int     // rounds with a ratio
	Ratio      float64 // typical new/old: median (sign test), geometric mean (t-test) or Hodges-Lehmann estimate (signed-rank)
	Lo, Hi     float64 // interval of Ratio at Confidence
	Confidence float64
	P          float64 // two-sided; 1 when there is nothing to test
}

// Change is Ratio - 1: +0.03 for 3% more.
func (r PairedResult) Change() float64 { return r.Ratio - 1 }

func (r PairedResult) String() string {
	return fmt.Sprintf("%+.2f%% [%+.2f%%, %+.2f%%] (%s, %d rounds, p=%.3g)",
		100*(r.Ratio-1), 100*(r.Lo-1), 100*(r.Hi-1), r.Method, r.N, r.P)
}

// ComparePaired tests log ratios (LogRatios) with method m and returns the
// typical ratio with its interval at confidence (e.g. 0.95).
func ComparePaired(m PairedMethod, logRatios []float64, confidence float64) PairedResult {
	res := PairedResult{Method: m, N: len(logRatios), Ratio: math.NaN(), Lo: 0, Hi: math.Inf(1), Confidence: confidence, P: 1}
	if len(logRatios) == 0 {
		return res
	}
	d := slices.Clone(logRatios)
	slices.Sort(d)
	switch m {
	case SignTest:
		var up, down int
		for _, x := range d {
			switch {
			case x > 0:
				up++
			case x < 0:
				down++
			}
		}
		res.P = signP(up, down)
		s := stats.Sample{Xs: d, Sorted: true}
		med, lo, hi := stats.QuantileCI(len(d), 0.5, confidence).SampleCI(s)
		res.Ratio, res.Lo, res.Hi = math.Exp(med), math.Exp(lo), math.Exp(hi)
	case SignedRank:
		p, est, lo, hi := signedRank(d, confidence)
		res.P, res.Ratio, res.Lo, res.Hi = p, math.Exp(est), math.Exp(lo), math.Exp(hi)
	case TTest:
		mean := stats.Mean(d)
		res.Ratio = math.Exp(mean)
		if len(d) < 2 {
			return res
		}
		sd := stats.StdDev(d)
		if sd == 0 {
			res.Lo, res.Hi = res.Ratio, res.Ratio
			if mean != 0 {
				res.P = 0 // every round moved by exactly the same amount
			}
			return res
		}
		if t, err := stats.OneSampleTTest(stats.Sample{Xs: d}, 0, stats.LocationDiffers); err == nil {
			res.P = t.P
		}
		half := tQuantile(float64(len(d)-1), 1-(1-confidence)/2) * sd / math.Sqrt(float64(len(d)))
		res.Lo, res.Hi = math.Exp(mean-half), math.Exp(mean+half)
	}
	return res
}

// signP is the two-sided sign test's p-value for up rounds above and down
// below (ties left out, as the test does).
func signP(up, down int) float64 {
	n := up + down
	if n == 0 {
		return 1
	}
	b := stats.BinomialDist{N: n, P: 0.5}
	k := min(up, down)
	return min(1, 2*b.CDF(float64(k)))
}

// tQuantile returns the q quantile of Student's t with dof degrees of
// freedom (moremath has the CDF only), by bisection.
func tQuantile(dof, q float64) float64 {
	t := stats.TDist{V: dof}
	lo, hi := -1e3, 1e3
	for range 200 {
		mid := (lo + hi) / 2
		if t.CDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// HolmLevels holds p-values to Holm's step-down levels of alpha: in order
// of p, the k-th smallest (from 0) of m is held to alpha/(m-k), and once
// one fails every larger one fails. NaN counts as 1.
func HolmLevels(ps []float64, alpha float64) (levels []float64, significant []bool) {
	return holmLevels(ps, alpha, func(a float64) float64 { return a })
}

// holmLevels is Holm's step-down with each share of alpha turned into a
// p-value's level by level (the identity for a single look).
func holmLevels(ps []float64, alpha float64, level func(float64) float64) (levels []float64, significant []bool) {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	p := func(i int) float64 {
		if math.IsNaN(ps[i]) {
			return 1
		}
		return ps[i]
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p(a), p(b)) })
	levels, significant = make([]float64, len(ps)), make([]bool, len(ps))
	rejecting := true
	for rank, i := range order {
		levels[i] = level(alpha / float64(len(ps)-rank))
		significant[i] = rejecting && p(i) < levels[i]
		rejecting = significant[i]
	}
	return levels, significant
}
