package perftestcmp

import (
	"fmt"
	"math"
	"strings"
)

// The paired verdict assumes that both runs of a round see one speed of
// the host and of the path. In the soft-RoCE VM that does not always hold:
// on some days the emulation switches between two speeds (2 B latency
// about 1.5x apart; the host's ALU stays steady meanwhile, the cause is
// open) every few hundred milliseconds, and a 2 B READ's
// completion moves between softirq and ksoftirqd in stretches. One side
// of a round can then run at one speed and the other side at the other,
// and the round's ratio measures that as much as the two programs
// (docs/comparing.md). It shows inside single runs: the medians
// of a steady run's stretches differ by a few per cent, across a switch
// by 30-50%. shiftOf measures that; the report counts the runs that
// changed speed and warns of the sizes where they are many.

const (
	shiftParts    = 10  // a run is cut into this many stretches of equal length
	shiftMinPart  = 20  // samples a stretch needs for its median to count
	unsteadyShift = 1.2 // a run whose stretches' medians differ more changed speed
	// unsteadyShare is the share of a size's runs that changed speed
	// above which the report warns that its p50 verdict weighs speeds.
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
	part := make([]float64, n)
	for i := range shiftParts {
		for j, v := range rtts[i*n : (i+1)*n] {
			part[j] = float64(v)
		}
		m := spreadOf(part).Median // the median as the report's spreads take it
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
			v, ok := f["shift"] // absent where the run was too short
			if !ok {
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
		return "speed within runs: runs too short to tell"
	}
	return fmt.Sprintf("speed within runs: %d of %d runs changed speed mid-run (a tenth of the run's median %.1fx another's): perftest %d, ours %d",
		pt+ours, judged, unsteadyShift, pt, ours)
}

// steadinessWarning returns the report's warning naming the sizes where
// more than unsteadyShare of the runs changed speed, else "".
func steadinessWarning(sums []SizeSummary) string {
	var which []string
	for _, s := range sums {
		pt, ours, n := unsteadyRuns(s.Samples)
		if n > 0 && float64(pt+ours) > unsteadyShare*float64(n) {
			which = append(which, fmt.Sprintf("%s %d (%d of %d)", s.Tool.name, s.Size, pt+ours, n))
		}
	}
	if len(which) == 0 {
		return ""
	}
	return fmt.Sprintf("warning: runs changed speed mid-run in over %.0f%% of the runs of %s: in the soft-RoCE VM, the emulation switching between two speeds (the host's; cause open), "+
		"or READ's completions moving between softirq and ksoftirqd; a round's two runs may then have run at different speeds, "+
		"so that its p50 ratio weighs them as well as the two sides, and a p50 verdict there, MISSED included, may be theirs: "+
		"rerun on a steady host, or on hardware (docs/comparing.md)", unsteadyShare*100, strings.Join(which, ", "))
}
