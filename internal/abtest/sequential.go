package abtest

import "fmt"

// A Decision is what a sequential paired rule concludes at one look.
type Decision int

const (
	Undecided Decision = iota // more rounds needed
	Different                 // the sides differ (p below the look's level)
	Same                      // the interval lies within ±Threshold
)

func (d Decision) String() string {
	switch d {
	case Different:
		return "different"
	case Same:
		return "same"
	}
	return "undecided"
}

// A SequentialRule judges paired rounds as they accumulate, in the manner
// of Chromium's Pinpoint: different when the test's p-value is below the
// look's level, same when the interval of the ratio lies within
// ±Threshold, otherwise undecided, and the caller adds rounds until it
// decides or MaxLooks is reached. Looking again and again at growing data
// raises the chance of a false alarm; every look is held to one level,
// calibrated so that the chance of any false "different" over all looks
// is at most Alpha (boundary.go: Pocock's flat boundary, simulated for
// the method).
type SequentialRule struct {
	Method    PairedMethod
	Alpha     float64 // false "different" over all looks and all metrics judged together
	Threshold float64 // smallest change that matters: 0.01 for 1%
	MaxLooks  int
	MinRounds int // rounds before any decision
}

// LastRound is the number of rounds at the rule's last look.
func (r SequentialRule) LastRound() int { return max(1, r.MinRounds) + max(1, r.MaxLooks) - 1 }

// LookAlpha is the level every look holds one metric's p-value to when
// the whole of Alpha is spent on it.
func (r SequentialRule) LookAlpha() float64 { return r.levelFor(r.Alpha) }

// levelFor is the per-look level that spends alpha over all looks.
func (r SequentialRule) levelFor(alpha float64) float64 {
	return flatBoundary(r.Method, alpha, max(1, r.MinRounds), r.LastRound())
}

// A PairedFinding is one metric's paired judgement at one look.
type PairedFinding struct {
	Name     string // what was compared, e.g. "RDMAWrite/size=2 p50"
	Result   PairedResult
	Alpha    float64 // Holm's level for this metric at this look
	Decision Decision
	// Regressed: different, and worse (new above old: lower is better)
	// by more than the threshold.
	Regressed bool
}

// Decide judges each metric's log ratios at one look: the metrics share
// Alpha by Holm's step-down (the smallest p may spend Alpha/m over all
// looks, the next Alpha/(m-1), ...), each share turned into a per-look
// level by the flat boundary, and the intervals, for "same", are taken at
// 1-LookAlpha. Lower is better for every metric (latencies).
func (r SequentialRule) Decide(names []string, logRatios [][]float64) []PairedFinding {
	la := r.LookAlpha()
	fs := make([]PairedFinding, len(names))
	ps := make([]float64, len(names))
	for i := range names {
		fs[i].Name = names[i]
		fs[i].Result = ComparePaired(r.Method, logRatios[i], 1-la)
		ps[i] = fs[i].Result.P
	}
	levels, sig := holmLevels(ps, r.Alpha, r.levelFor)
	for i := range fs {
		f := &fs[i]
		f.Alpha = levels[i]
		res := f.Result
		switch {
		case res.N < r.MinRounds:
			f.Decision = Undecided
		case sig[i]:
			f.Decision = Different
		case res.Lo >= 1/(1+r.Threshold) && res.Hi <= 1+r.Threshold:
			f.Decision = Same
		}
		f.Regressed = f.Decision == Different && res.Change() > r.Threshold
	}
	return fs
}

// Overall is the family's decision: different if any metric regressed or
// changed, same if every metric is the same, otherwise undecided.
func Overall(fs []PairedFinding) Decision {
	same := len(fs) > 0
	for _, f := range fs {
		if f.Decision == Different {
			return Different
		}
		same = same && f.Decision == Same
	}
	if same {
		return Same
	}
	return Undecided
}

// A GateOutcome is what a gate makes of a look's findings.
type GateOutcome int

const (
	GatePass      GateOutcome = iota // no metric regressed by more than the threshold
	GateFail                         // a metric regressed by more than the threshold
	GateUndecided                    // more rounds are needed (or would be)
)

// Gate reads a look's findings as a CI gate does: fail when a metric
// regressed by more than the threshold; pass when every metric is decided
// (same, or different without such a regression); otherwise, while rounds
// remain (fewer than LastRound), undecided. At the last look a metric that
// is still undecided passes when its estimate is within the threshold (no
// regression was found, and the estimate is not one) and stays undecided
// when the estimate is worse by more than the threshold (it looks like a
// regression the rounds could not confirm). The reason says which.
//
// So the gate passes what its budget could not tell from no change, as a
// U-test gate does, but never a change whose own estimate is above the
// threshold; "same" (an interval within ±threshold) is an early stop,
// not the only way to pass: on a host whose processes carry offsets of a
// few percent, showing a 1% equivalence takes hundreds of rounds.
func (r SequentialRule) Gate(fs []PairedFinding) (GateOutcome, string) {
	if len(fs) == 0 {
		return GateUndecided, "nothing to judge"
	}
	open, worse := 0, 0
	last := true
	for _, f := range fs {
		if f.Regressed {
			return GateFail, fmt.Sprintf("a metric is worse by more than %g%%", r.Threshold*100)
		}
		if f.Decision == Undecided {
			open++
			last = last && f.Result.N >= r.LastRound()
			if f.Result.Change() > r.Threshold || f.Result.N < r.MinRounds {
				worse++
			}
		}
	}
	switch {
	case open == 0:
		return GatePass, "every metric decided, none worse by more than the threshold"
	case !last:
		return GateUndecided, "more rounds (-count) would decide"
	case worse > 0:
		return GateUndecided, fmt.Sprintf("a metric's estimate is worse by more than %g%% but not significantly, after every round of -count: more rounds would decide", r.Threshold*100)
	}
	return GatePass, fmt.Sprintf("no regression found in %d rounds (-count); each undecided metric's estimate is within %g%%", r.LastRound(), r.Threshold*100)
}
