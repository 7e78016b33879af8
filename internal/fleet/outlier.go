package fleet

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A Measure is one pair's figure (its median latency over the
// repetitions, in seconds), or the reason it has none.
type Measure struct {
	Pair
	Round  int
	Value  float64 // seconds; unused when Failed
	Failed string  // why the pair has no figure; "" when measured
}

// Thresholds are the outlier rules. A pair is flagged when it is slower
// than MinRatio times the fleet's fastest pair (ClusterKit's rule), or
// than the median of all pairs plus MADs median absolute deviations
// (Intel Cluster Checker's rule). The MAD rule never flags a pair within
// MinMargin (a fraction) of the median: on a uniform fleet the MAD can be
// 0, because percentiles have 3 significant digits, and the rule would
// then flag every pair a rounding step above the median.
type Thresholds struct {
	MinRatio  float64
	MADs      float64
	MinMargin float64
}

// DefaultThresholds are the rules of the tools fleet operators know.
var DefaultThresholds = Thresholds{MinRatio: 2.1, MADs: 6, MinMargin: 0.05}

// A Flag is a pair above a limit.
type Flag struct {
	Measure
	Rules []string // "min" (above MinRatio x min), "mad" (above median + MADs x MAD)
}

// A Suspect is a node that is in most of its bad (flagged or failed) pairs.
type Suspect struct {
	Node          string
	Bad, Measured int // bad pairs and all pairs it was planned in
}

// An Analysis is the verdict on a fleet's pairs.
type Analysis struct {
	Thresholds
	Measured           int     // pairs with a figure
	Min, Median, MAD   float64 // over the measured pairs, seconds
	MinLimit, MADLimit float64 // a pair above either is flagged
	Fastest            Measure
	Flagged            []Flag    // slowest first
	Failed             []Measure // in plan order
	Suspects           []Suspect // most bad pairs first
	// Rail, if set, is the rail judged (rdmafleet -rails): Format names it
	// on every pair and node line, as a report of several rails has a
	// verdict per rail.
	Rail string
}

// Analyse applies th to the measures. A node is a suspect when more than
// half of its pairs, and at least two, are bad: a slow or failed node
// spoils every pair it is in, while a slow link spoils one.
//
// A figure that is no latency (NaN, infinite, negative) counts as a failed
// pair: the readers refuse such values, and the rules must never compare
// with one.
func Analyse(measures []Measure, th Thresholds) Analysis {
	a := Analysis{Thresholds: th}
	cloned := false // a fleet of 1000 nodes has half a million measures: copied only to fail one
	for i, m := range measures {
		if m.Failed == "" && (math.IsNaN(m.Value) || math.IsInf(m.Value, 0) || m.Value < 0) {
			if !cloned {
				measures, cloned = slices.Clone(measures), true
			}
			measures[i].Failed = "its figure is no latency (not finite, or negative)"
		}
	}
	var values []float64
	for _, m := range measures {
		if m.Failed != "" {
			a.Failed = append(a.Failed, m)
			continue
		}
		values = append(values, m.Value)
		if a.Measured == 0 || m.Value < a.Fastest.Value {
			a.Fastest = m
		}
		a.Measured++
	}
	bad := map[string]int{}
	planned := map[string]int{}
	for _, m := range measures {
		planned[m.Src]++
		planned[m.Dst]++
	}
	for _, m := range a.Failed {
		bad[m.Src]++
		bad[m.Dst]++
	}
	if len(values) > 0 {
		a.Min = slices.Min(values)
		a.Median = Median(values)
		dev := make([]float64, len(values))
		for i, v := range values {
			dev[i] = math.Abs(v - a.Median)
		}
		a.MAD = Median(dev)
		a.MinLimit = th.MinRatio * a.Min
		a.MADLimit = a.Median + math.Max(th.MADs*a.MAD, th.MinMargin*a.Median)
		for _, m := range measures {
			if m.Failed != "" {
				continue
			}
			var rules []string
			if m.Value > a.MinLimit {
				rules = append(rules, "min")
			}
			if m.Value > a.MADLimit {
				rules = append(rules, "mad")
			}
			if rules != nil {
				a.Flagged = append(a.Flagged, Flag{m, rules})
				bad[m.Src]++
				bad[m.Dst]++
			}
		}
		slices.SortStableFunc(a.Flagged, func(x, y Flag) int { return -cmpFloat(x.Value, y.Value) })
	}
	for node, b := range bad {
		if b >= 2 && 2*b > planned[node] {
			a.Suspects = append(a.Suspects, Suspect{node, b, planned[node]})
		}
	}
	slices.SortFunc(a.Suspects, func(x, y Suspect) int {
		if x.Bad != y.Bad {
			return y.Bad - x.Bad
		}
		return strings.Compare(x.Node, y.Node)
	})
	return a
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Median returns the median of vs (the mean of the middle two for an even
// count); vs is not changed.
func Median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// BadPairs returns the flagged and failed pairs, the ones to retest.
func (a Analysis) BadPairs() []Pair {
	var pairs []Pair
	for _, f := range a.Flagged {
		pairs = append(pairs, f.Pair)
	}
	for _, m := range a.Failed {
		pairs = append(pairs, m.Pair)
	}
	return pairs
}

// Format writes the verdict for people, times in microseconds.
func (a Analysis) Format(b *strings.Builder) {
	us := func(s float64) string { return fmt.Sprintf("%.2fus", s*1e6) }
	on := "" // the rail after the pair or node, with rails only
	if a.Rail != "" {
		on = " rail " + a.Rail
	}
	fmt.Fprintf(b, "pairs measured: %d, failed: %d\n", a.Measured, len(a.Failed))
	if a.Measured > 0 {
		fmt.Fprintf(b, "fastest: %s %s %s; median %s, MAD %s\n", a.Fastest.Src, a.Fastest.Dst, us(a.Min), us(a.Median), us(a.MAD))
		fmt.Fprintf(b, "limits: %.3gx min = %s (rule min); median + %g MAD, at least +%.0f%% = %s (rule mad)\n",
			a.MinRatio, us(a.MinLimit), a.MADs, 100*a.MinMargin, us(a.MADLimit))
	}
	if len(a.Flagged) == 0 && len(a.Failed) == 0 {
		b.WriteString("no outliers\n")
		return
	}
	for _, f := range a.Flagged {
		fmt.Fprintf(b, "flagged: round %d %s %s%s %s = %.2fx min (rules %s)\n", f.Round, f.Src, f.Dst, on, us(f.Value), f.Value/a.Min, strings.Join(f.Rules, ","))
	}
	for _, m := range a.Failed {
		fmt.Fprintf(b, "failed: round %d %s %s%s: %s\n", m.Round, m.Src, m.Dst, on, m.Failed)
	}
	if len(a.Suspects) == 0 {
		b.WriteString("no node is in most of its bad pairs: suspect the links (or, with 2 nodes, either node)\n")
	}
	for _, s := range a.Suspects {
		fmt.Fprintf(b, "node %s%s: in %d of its %d pairs flagged or failed\n", s.Node, on, s.Bad, s.Measured)
	}
}
