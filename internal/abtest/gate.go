package abtest

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"

	"github.com/rdmabench/rdmabench/internal/sticky"
)

// A GateRule says which change fails a CI job: a metric of Units that got
// worse by more than Threshold (0.05 for 5%, as a change of the medians)
// where the Mann-Whitney U test (benchmath.AssumeNothing, as benchstat
// uses) finds the two sides differ. Both conditions: a significant change
// too small to matter passes, and so does a large change the samples
// cannot tell from noise.
//
// Alpha is the chance of a false alarm for the whole job, not for each
// metric: the gate judges every gated key at once (p50 and p99 at two
// sizes are four tests) and holds their p-values to Holm's step-down
// levels, the smallest to Alpha/m, the next to Alpha/(m-1), and so on.
// Judged each at Alpha, the four failed 2 of 10 A/A trials of make
// validate-ab, a false alarm rate no CI job can live with.
type GateRule struct {
	Units      []string
	Threshold  float64
	Alpha      float64
	Confidence float64 // of the medians' intervals shown
}

// A Finding is the gate's judgement of one key.
type Finding struct {
	Key           Key
	Old, New      benchmath.Summary
	Cmp           benchmath.Comparison
	Change        float64 // new/old - 1 of the medians; NaN when old's is 0
	LowerIsBetter bool
	// Alpha is the level this key's p was held to (Holm's, see GateRule)
	// and Significant whether it passed it.
	Alpha       float64
	Significant bool
	// Judged is false when there are too few samples to find any
	// difference significant at the strictest level (benchmath's warning
	// is in Cmp.Warnings).
	Judged    bool
	Regressed bool
}

// Worse is the change in the direction that is worse: positive when the
// new median is worse.
func (f Finding) Worse() float64 {
	if f.LowerIsBetter {
		return f.Change
	}
	return -f.Change
}

// ErrTooFew means a gated key had too few samples on a side for the
// U test to reach significance, so the gate cannot pass it either.
var ErrTooFew = errors.New("too few samples to judge")

// A Verdict is the gate applied to two sides.
type Verdict struct {
	Rule     GateRule
	Findings []Finding
	Missing  []Key // gated keys only one side has
}

// Failed reports whether any key regressed.
func (v Verdict) Failed() bool {
	for _, f := range v.Findings {
		if f.Regressed {
			return true
		}
	}
	return false
}

// Err returns ErrTooFew (wrapped, naming the keys) when a key could not be
// judged, and an error when no key at all matched the gated units.
func (v Verdict) Err() error {
	if len(v.Findings) == 0 {
		return fmt.Errorf("no result on both sides has a gated unit (%s)", strings.Join(v.Rule.Units, ", "))
	}
	var bad []string
	for _, f := range v.Findings {
		if !f.Judged {
			bad = append(bad, f.Key.String())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s (run 6 or more repetitions a side; 10 is better)", ErrTooFew, strings.Join(bad, "; "))
	}
	return nil
}

// Judge applies the rule to every key of old and new whose unit is gated.
func (r GateRule) Judge(old, new *Results) Verdict {
	v := Verdict{Rule: r}
	keys, missing := KeysFor(old, new, r.Units)
	v.Missing = missing
	// benchmath warns when the samples could not reach this level, which
	// makes a key unjudged: use the strictest level Holm may apply.
	th := benchmath.Thresholds{CompareAlpha: r.Alpha / float64(max(1, len(keys)))}
	for _, k := range keys {
		so := benchmath.NewSample(append([]float64(nil), old.Values[k]...), &th)
		sn := benchmath.NewSample(append([]float64(nil), new.Values[k]...), &th)
		f := Finding{
			Key:           k,
			Old:           benchmath.AssumeNothing.Summary(so, r.Confidence),
			New:           benchmath.AssumeNothing.Summary(sn, r.Confidence),
			Cmp:           benchmath.AssumeNothing.Compare(so, sn),
			Change:        math.NaN(),
			LowerIsBetter: old.LowerIsBetter(k.Unit),
		}
		if f.Old.Center != 0 {
			f.Change = f.New.Center/f.Old.Center - 1
		}
		// A pass needs samples that could have failed: benchmath warns
		// when even a total separation could not reach alpha, or when a
		// side is too small for a 95% interval of its median.
		f.Judged = f.Cmp.P < f.Cmp.Alpha ||
			len(f.Cmp.Warnings) == 0 && len(f.Old.Warnings) == 0 && len(f.New.Warnings) == 0 ||
			allEqual(so.Values, sn.Values) && len(so.Values) >= 6 && len(sn.Values) >= 6
		v.Findings = append(v.Findings, f)
	}
	holm(v.Findings, r.Alpha)
	for i := range v.Findings {
		f := &v.Findings[i]
		f.Regressed = f.Significant && f.Worse() > r.Threshold
	}
	return v
}

// holm sets each finding's Alpha and Significant by Holm's step-down
// method: in order of p, the k-th smallest (from 0) of m is held to
// alpha/(m-k), and once one fails the larger ones fail too. The chance of
// any false alarm among the m stays at most alpha, whatever their
// dependence.
func holm(fs []Finding, alpha float64) {
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	p := func(i int) float64 {
		if math.IsNaN(fs[i].Cmp.P) {
			return 1 // no test: last, and never significant
		}
		return fs[i].Cmp.P
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p(a), p(b)) })
	rejecting := true
	for rank, i := range order {
		fs[i].Alpha = alpha / float64(len(fs)-rank)
		fs[i].Significant = rejecting && fs[i].Cmp.P < fs[i].Alpha
		rejecting = fs[i].Significant
	}
}

// Print writes one line per finding and a last line with the outcome:
//
//	FAIL RDMAWrite/size=2-4 p50-ns: old 10.1µs [10.0µs, 10.2µs] new 10.9µs [10.8µs, 11.0µs]: +7.9% worse, p=0.000 < 0.05, above the 5% threshold
func (v Verdict) Print(w io.Writer) error {
	p := &sticky.Printer{W: w}
	if n := len(v.Findings); n > 1 {
		p.Printf("gate: a metric fails when it is worse by more than %g%% and the U test finds a difference at %g over all %d metrics "+
			"(Holm: the smallest p must be below %.3g, the next below %.3g, ...; medians, %g%% intervals)\n",
			v.Rule.Threshold*100, v.Rule.Alpha, n, v.Rule.Alpha/float64(n), v.Rule.Alpha/float64(n-1), v.Rule.Confidence*100)
	} else {
		p.Printf("gate: a metric fails when it is worse by more than %g%% and the U test says p < %g (medians, %g%% intervals)\n",
			v.Rule.Threshold*100, v.Rule.Alpha, v.Rule.Confidence*100)
	}
	n := 0
	for _, f := range v.Findings {
		if f.Regressed {
			n++
		}
		p.Printf("%s %s %s: old %s new %s: %s, %s\n", findingTag(f.Regressed, f.Judged), f.Key.Name, f.Key.Unit,
			summaryString(f.Old, f.Key.Unit), summaryString(f.New, f.Key.Unit), changeString(f), reason(f, v.Rule))
		for _, e := range warnings(f) {
			p.Printf("     warning: %v\n", e)
		}
	}
	err := v.Err()
	printOutcome(p, "gate", v.Missing, n, len(v.Findings), err, errors.Is(err, ErrTooFew))
	return p.Err
}

func changeString(f Finding) string {
	if math.IsNaN(f.Change) {
		return "change ?"
	}
	dir := "better"
	if f.Worse() > 0 {
		dir = "worse"
	}
	if f.Change == 0 {
		return "no change"
	}
	return fmt.Sprintf("%+.1f%% %s", f.Change*100, dir)
}

func reason(f Finding, r GateRule) string {
	p := fmt.Sprintf("p=%.3f", f.Cmp.P)
	switch {
	case f.Cmp.P >= f.Alpha:
		return fmt.Sprintf("%s >= %.3g, not significant", p, f.Alpha)
	case !f.Significant:
		return fmt.Sprintf("%s < %.3g, not significant: a smaller p was not (Holm)", p, f.Alpha)
	case f.Worse() <= 0:
		return fmt.Sprintf("%s < %.3g, an improvement", p, f.Alpha)
	case f.Regressed:
		return fmt.Sprintf("%s < %.3g, above the %g%% threshold", p, f.Alpha, r.Threshold*100)
	}
	return fmt.Sprintf("%s < %.3g, within the %g%% threshold", p, f.Alpha, r.Threshold*100)
}

// summaryString prints a median and its interval in the unit's tidied
// scale: "10.1µs [10.0µs, 10.2µs]" for p50-ns.
func summaryString(s benchmath.Summary, unit string) string {
	c, _ := benchunit.Tidy(s.Center, unit)
	lo, _ := benchunit.Tidy(s.Lo, unit)
	hi, _ := benchunit.Tidy(s.Hi, unit)
	_, tu := benchunit.Tidy(1, unit)
	cls := benchunit.ClassOf(tu)
	sc := benchunit.CommonScale([]float64{c}, cls)
	suffix := tidySuffix(tu)
	f := func(x float64) string {
		if math.IsInf(x, 1) {
			return "∞"
		}
		if math.IsInf(x, -1) {
			return "-∞"
		}
		return sc.Format(x) + suffix
	}
	return fmt.Sprintf("%s [%s, %s]", f(c), f(lo), f(hi))
}

// tidySuffix is what a scaled value of tidied unit u is followed by: "s"
// for a time ("p50-sec", "sec/op"), else the unit itself after a space.
func tidySuffix(u string) string {
	if strings.HasSuffix(u, "-sec") || strings.HasPrefix(u, "sec/") {
		return "s"
	}
	return " " + u
}

// warnings returns a finding's benchmath warnings, each once.
func warnings(f Finding) []error {
	var out []error
	seen := map[string]bool{}
	for _, e := range append(append(append([]error(nil), f.Old.Warnings...), f.New.Warnings...), f.Cmp.Warnings...) {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return out
}

// allEqual reports whether every value of a and b is the same (the U test
// then fails, "all samples are equal": an exact match, not a doubt).
func allEqual(a, b []float64) bool {
	for _, xs := range [][]float64{a, b} {
		for _, x := range xs {
			if x != a[0] {
				return false
			}
		}
	}
	return len(a) > 0
}
