package perftestcmp

import (
	"fmt"
	"math"
	"slices"
)

// The paired verdict assumes that the host runs both sides of a round at
// one speed. The soft-RoCE VM's host does not always: on some days its
// CPUs switch between two speeds (2 B latency about 1.5x apart) every few
// hundred milliseconds, so that one side of a round can run at one speed
// and the other side at the other, and a round's ratio then measures the
// host as much as the two programs (docs/compare.md, 2026-12-04). Such a
// host shows inside single runs too: the median of one stretch of a run
// differs from another's by far more than on a steady host (1-5% there,
// 30-50% across a switch). shiftOf measures that, and the report counts
// the runs that changed speed and warns when they are many.

const (
	shiftParts    = 10  // a run is cut into this many stretches of equal length
	shiftMinPart  = 20  // samples a stretch needs for its median to count
	unsteadyShift = 1.2 // a run whose stretches' medians differ more changed speed
	// unsteadyShare is the share of runs that changed speed above which
	// the report warns that its p50 verdicts weigh the host's speeds.
	unsteadyShare = 0.1
)

// shiftOf returns the largest ratio between the medians of two of the
// shiftParts consecutive stretches of rtts (in run order), or NaN when a
// stretch would hold fewer than shiftMinPart samples.
func shiftOf(rtts []int64) float64 {
	n := len(rtts) / shiftParts
	if n < shiftMinPart {
		return math.NaN()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	part := make([]int64, n)
	for i := range shiftParts {
		copy(part, rtts[i*n:(i+1)*n])
		slices.Sort(part)
		m := float64(part[(n-1)/2]+part[n/2]) / 2
		lo, hi = min(lo, m), max(hi, m)
	}
	if lo <= 0 {
		return math.NaN()
	}
	return hi / lo
}

// unsteadyRuns counts, over the samples where both sides ran, the runs
// whose shift exceeds unsteadyShift, for perftest and ours, and the runs
// whose shift is known.
func unsteadyRuns(samples []Sample) (perftest, ours, judged int) {
	for _, s := range samples {
		if s.Perftest == nil || s.Ours == nil {
			continue
		}
		for side, f := range []Figures{s.Perftest, s.Ours} {
			v, ok := f["shift"]
			if !ok || math.IsNaN(v) {
				continue
			}
			judged++
			if v > unsteadyShift {
				if side == 0 {
					perftest++
				} else {
					ours++
				}
			}
		}
	}
	return perftest, ours, judged
}

// steadinessLine says how many runs of one size changed speed.
func steadinessLine(samples []Sample) string {
	pt, ours, judged := unsteadyRuns(samples)
	if judged == 0 {
		return "host speed: runs too short to tell"
	}
	return fmt.Sprintf("host speed: %d of %d runs changed speed mid-run (a tenth of the run's median %.1fx another's): perftest %d, ours %d",
		pt+ours, judged, unsteadyShift, pt, ours)
}

// steadinessWarning returns the report's warning when more than
// unsteadyShare of all runs changed speed, else "".
func steadinessWarning(sums []SizeSummary) string {
	var bad, judged int
	for _, s := range sums {
		pt, ours, n := unsteadyRuns(s.Samples)
		bad, judged = bad+pt+ours, judged+n
	}
	if judged == 0 || float64(bad) <= unsteadyShare*float64(judged) {
		return ""
	}
	return fmt.Sprintf("warning: the host changed speed within %d of %d runs (over %.0f%%): a round's two runs may then have run at different speeds, "+
		"so its p50 ratio weighs the host's speeds as well as the two sides, and a p50 verdict, MISSED included, may be the host's; "+
		"rerun when the host is steady, or on hardware (docs/compare.md)", bad, judged, unsteadyShare*100)
}
