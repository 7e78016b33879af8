package abtest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/internal/sticky"
)

// IsWorkUnit reports whether unit counts work (instructions per
// operation: user-insns/op, kernel-insns/op, ...) rather than time. Work
// is judged by the WorkRule, time by the tests.
func IsWorkUnit(unit string) bool { return strings.Contains(unit, "insns") }

// SplitWork returns the units of work and the others (time), each in the
// order given.
func SplitWork(units []string) (work, other []string) {
	for _, u := range units {
		if IsWorkUnit(u) {
			work = append(work, u)
		} else {
			other = append(other, u)
		}
	}
	return work, other
}

// A WorkRule judges metrics that count work. A count of instructions
// repeats from run to run (user work to a tenth of an instruction, kernel
// work to a fraction of a percent, whatever the host's load), so a rank
// test has nothing to rank: with 3 runs a side and no spread, the U test
// cannot reach any useful level, while the answer is plain. The rule is
// explicit instead: a metric regressed when its median is worse by more
// than its unit's threshold AND the sides' ranges do not overlap (every
// run of new worse than every run of old). Worse by more than the
// threshold with overlapping ranges is undecided: the runs spread as
// widely as the change, and more runs (or a quieter host) would tell.
// No test, so no alpha: the thresholds stand on the A/A spread measured
// (DefaultThresholds says which).
type WorkRule struct {
	Units []string
	// Thresholds is the relative change of the median that fails, per
	// unit (0.001 for 0.1%); Other is for a work unit not in it.
	Thresholds map[string]float64
	Other      float64
	// MinRuns is the fewest runs a side for a decision: with fewer, no
	// range says how far the runs spread.
	MinRuns int
}

// Threshold is unit's threshold.
func (r WorkRule) Threshold(unit string) float64 {
	if t, ok := r.Thresholds[unit]; ok {
		return t
	}
	return r.Other
}

// A WorkFinding is the work rule's judgement of one key.
type WorkFinding struct {
	Key               Key
	Old, New          WorkRange
	Change            float64 // new/old - 1 of the medians; NaN when old's is 0
	Threshold         float64
	Apart             bool // the ranges do not overlap
	Judged, Regressed bool
	Improved, TooWide bool // better beyond the threshold and apart; worse beyond it but overlapping
}

// A WorkRange is one side's runs of a key: how many, the median and the
// extremes.
type WorkRange struct {
	N        int
	Median   float64
	Min, Max float64
}

// Spread is the range relative to the median: (max-min)/median.
func (w WorkRange) Spread() float64 {
	if w.Median == 0 {
		return 0
	}
	return (w.Max - w.Min) / w.Median
}

func rangeOf(xs []float64) WorkRange {
	s := slices.Clone(xs)
	sort.Float64s(s)
	w := WorkRange{N: len(s)}
	if len(s) == 0 {
		return w
	}
	w.Min, w.Max = s[0], s[len(s)-1]
	if n := len(s); n%2 == 1 {
		w.Median = s[n/2]
	} else {
		w.Median = (s[n/2-1] + s[n/2]) / 2
	}
	return w
}

// A WorkVerdict is the work rule applied to two sides.
type WorkVerdict struct {
	Rule     WorkRule
	Findings []WorkFinding
	Missing  []Key // keys of the rule's units only one side has
}

// Judge applies the rule to every key of old and new whose unit is one
// of the rule's.
func (r WorkRule) Judge(old, new *Results) WorkVerdict {
	v := WorkVerdict{Rule: r}
	keys, missing := KeysFor(old, new, r.Units)
	v.Missing = missing
	for _, k := range keys {
		f := WorkFinding{Key: k, Old: rangeOf(old.Values[k]), New: rangeOf(new.Values[k]),
			Change: math.NaN(), Threshold: r.Threshold(k.Unit)}
		if f.Old.Median != 0 {
			f.Change = f.New.Median/f.Old.Median - 1
		}
		f.Judged = f.Old.N >= r.MinRuns && f.New.N >= r.MinRuns && !math.IsNaN(f.Change)
		worse, better := f.New.Min > f.Old.Max, f.New.Max < f.Old.Min
		if !old.LowerIsBetter(k.Unit) {
			worse, better = better, worse
		}
		f.Apart = worse || better
		w := f.Worse()
		switch {
		case !f.Judged:
		case w > f.Threshold && worse:
			f.Regressed = true
		case w > f.Threshold:
			f.TooWide, f.Judged = true, false
		case -w > f.Threshold && better:
			f.Improved = true
		}
		v.Findings = append(v.Findings, f)
	}
	return v
}

// Worse is the change in the direction that is worse (work: more).
func (f WorkFinding) Worse() float64 { return f.Change }

// Failed reports whether any key regressed.
func (v WorkVerdict) Failed() bool {
	for _, f := range v.Findings {
		if f.Regressed {
			return true
		}
	}
	return false
}

// Decided reports whether the rule judged at least one key and every
// key it was given.
func (v WorkVerdict) Decided() bool { return len(v.Findings) > 0 && v.Err() == nil }

// ErrWorkSpread means a work metric was worse by more than its threshold
// while the sides' runs overlapped.
var ErrWorkSpread = errors.New("the runs spread as widely as the change")

// Err returns ErrTooFew or ErrWorkSpread (wrapped, naming the keys) when a
// key could not be decided, and an error when no key had a work unit.
func (v WorkVerdict) Err() error {
	if len(v.Findings) == 0 {
		return fmt.Errorf("no result on both sides has a work unit (%s): count them with rxevm -insns (rdmaab -work)", strings.Join(v.Rule.Units, ", "))
	}
	var few, wide []string
	for _, f := range v.Findings {
		switch {
		case f.TooWide:
			wide = append(wide, f.Key.String())
		case !f.Judged:
			few = append(few, f.Key.String())
		}
	}
	if len(wide) > 0 {
		return fmt.Errorf("%w: %s (worse by more than the threshold, but the sides' runs overlap: run more, -count)", ErrWorkSpread, strings.Join(wide, "; "))
	}
	if len(few) > 0 {
		return fmt.Errorf("%w: %s (the work rule needs %d runs a side)", ErrTooFew, strings.Join(few, "; "), v.Rule.MinRuns)
	}
	return nil
}

// Print writes one line per finding and a last line with the outcome:
//
//	FAIL RDMAWrite/size=2-4 user-insns/op: old 873.0 [873.0, 873.1] new 1013.0 [1013.0, 1013.0]: +16.04% worse, above the 0.1% threshold, ranges apart
func (v WorkVerdict) Print(w io.Writer) error {
	p := &sticky.Printer{W: w}
	var ths []string
	for _, u := range v.Rule.Units {
		ths = append(ths, u+" "+pct(v.Rule.Threshold(u)))
	}
	p.Printf("work: a metric fails when its median is worse by more than its threshold (%s) and every run of new is worse than every run of old; "+
		"%d runs a side at least (no test: counted work repeats; medians, [min, max] of the runs)\n", strings.Join(ths, ", "), v.Rule.MinRuns)
	n := 0
	for _, f := range v.Findings {
		if f.Regressed {
			n++
		}
		p.Printf("%s %s %s: old %s new %s: %s, %s\n", findingTag(f.Regressed, f.Judged), f.Key.Name, f.Key.Unit, f.Old, f.New, workChange(f), workReason(f, v.Rule))
	}
	err := v.Err()
	printOutcome(p, "work", v.Missing, n, len(v.Findings), err, len(v.Findings) > 0)
	return p.Err
}

func (w WorkRange) String() string {
	return fmt.Sprintf("%s [%s, %s]", count(w.Median), count(w.Min), count(w.Max))
}

// count prints an instruction count per operation: one decimal, as the
// counts repeat to a tenth of an instruction.
func count(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// pct prints a fraction as a percentage without trailing zeros: 0.1%.
func pct(x float64) string { return strconv.FormatFloat(x*100, 'g', 4, 64) + "%" }

func workChange(f WorkFinding) string {
	switch {
	case math.IsNaN(f.Change):
		return "change ?"
	case f.Change == 0:
		return "no change"
	case f.Worse() > 0:
		return fmt.Sprintf("%+.2f%% worse", f.Change*100)
	}
	return fmt.Sprintf("%+.2f%% better", f.Change*100)
}

func workReason(f WorkFinding, r WorkRule) string {
	apart := "ranges overlap"
	if f.Apart {
		apart = "ranges apart"
	}
	th := pct(f.Threshold)
	switch {
	case f.Old.N < r.MinRuns || f.New.N < r.MinRuns:
		return fmt.Sprintf("%d and %d runs: fewer than %d a side, undecided", f.Old.N, f.New.N, r.MinRuns)
	case math.IsNaN(f.Change):
		return "old's median is 0, undecided"
	case f.Regressed:
		return "above the " + th + " threshold, " + apart
	case f.TooWide:
		return "above the " + th + " threshold, but " + apart + ": undecided"
	case f.Improved:
		return "an improvement beyond " + th + ", " + apart
	case -f.Worse() > f.Threshold:
		return "better by more than the " + th + " threshold, but " + apart
	}
	return "within the " + th + " threshold, " + apart
}
