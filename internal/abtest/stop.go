package abtest

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"golang.org/x/perf/benchmath"
)

// A Pair is one old run and one new run taken back to back.
type Pair struct {
	Old, New *Results
}

// ReadPairs rebuilds the pairs of an interleaved comparison from each
// side's whole output: the i-th run of each side belongs to pair i. A run
// ends with the test binary's "PASS" line (or go test's "ok" line).
func ReadPairs(old, new io.Reader) ([]Pair, error) {
	var runs [2][]*Results
	for side, r := range []io.Reader{old, new} {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		for i, chunk := range SplitRuns(b) {
			rs, err := ReadResults(bytes.NewReader(chunk), fmt.Sprintf("%s run %d", Side(side), i+1))
			if err != nil {
				return nil, err
			}
			runs[side] = append(runs[side], rs)
		}
	}
	pairs := make([]Pair, min(len(runs[0]), len(runs[1])))
	for i := range pairs {
		pairs[i] = Pair{Old: runs[0][i], New: runs[1][i]}
	}
	return pairs, nil
}

// SplitRuns cuts one side's output into its runs.
func SplitRuns(b []byte) [][]byte {
	var runs [][]byte
	start := 0
	for off := 0; off < len(b); {
		end := bytes.IndexByte(b[off:], '\n')
		if end < 0 {
			end = len(b) - off
		} else {
			end++
		}
		line := strings.TrimSpace(string(b[off : off+end]))
		off += end
		if line == "PASS" || strings.HasPrefix(line, "ok ") {
			runs = append(runs, b[start:off])
			start = off
		}
	}
	if start < len(b) && len(bytes.TrimSpace(b[start:])) > 0 {
		runs = append(runs, b[start:])
	}
	return runs
}

// An Interval is the median over the pairs of one key's per-pair ratio
// new/old, with its confidence interval. A ratio taken within a pair
// cancels drift slower than a pair (the machine's load, the VM's state);
// the median of the ratios and its distribution-free interval (benchmath's
// AssumeNothing) say how large the change is and how sure that is.
type Interval struct {
	Key     Key
	N       int // pairs that had the key on both sides
	Summary benchmath.Summary
	// HalfWidth is the interval's larger distance from the median,
	// relative to it: 0.02 for ±2%. +Inf with too few pairs for the
	// confidence asked.
	HalfWidth float64
}

// Ratios returns the per-pair new/old ratios of k, in pair order, for the
// pairs where both runs reported it and old's value is not 0.
func Ratios(pairs []Pair, k Key) []float64 {
	var out []float64
	for _, p := range pairs {
		o, okO := p.Old.Values[k]
		n, okN := p.New.Values[k]
		if !okO || !okN || len(o) == 0 || len(n) == 0 || o[0] == 0 {
			continue
		}
		out = append(out, n[0]/o[0])
	}
	return out
}

// PairedIntervals returns the Interval of each key of units that both
// sides of the first pair reported, at the confidence asked.
func PairedIntervals(pairs []Pair, units []string, confidence float64) []Interval {
	if len(pairs) == 0 {
		return nil
	}
	keys, _ := KeysFor(pairs[0].Old, pairs[0].New, units)
	var out []Interval
	for _, k := range keys {
		r := Ratios(pairs, k)
		if len(r) == 0 {
			continue
		}
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(r, &benchmath.DefaultThresholds), confidence)
		out = append(out, Interval{Key: k, N: len(r), Summary: s, HalfWidth: halfWidth(s)})
	}
	return out
}

func halfWidth(s benchmath.Summary) float64 {
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || s.Center <= 0 {
		return math.Inf(1)
	}
	return math.Max(s.Hi/s.Center-1, 1-s.Lo/s.Center)
}

// String reads "Benchmark.../size=2-4 p50-ns: new/old 1.031 [1.012, 1.047] (±1.6%, 10 pairs)".
func (iv Interval) String() string {
	w := "±∞"
	if !math.IsInf(iv.HalfWidth, 0) {
		w = fmt.Sprintf("±%.1f%%", iv.HalfWidth*100)
	}
	return fmt.Sprintf("%s: new/old %.3f [%.3f, %.3f] (%s, %d pairs)", iv.Key, iv.Summary.Center, iv.Summary.Lo, iv.Summary.Hi, w, iv.N)
}

// A StopRule ends a repeated comparison, netperf -I style: once the
// confidence interval of the median per-pair ratio is within ±HalfWidth
// for every key of Units, or after MaxPairs pairs, whichever comes first.
type StopRule struct {
	Units      []string
	HalfWidth  float64 // 0.02 for ±2%
	Confidence float64 // 0.95
	MinPairs   int     // pairs always run
	MaxPairs   int
}

// A StopState is the stop rule applied to the pairs so far.
type StopState struct {
	Pairs     int
	Done      bool // stop now
	Converged bool // every interval is within the bound
	Intervals []Interval
	Widest    *Interval // the widest interval; nil when there is none
	Rule      StopRule
}

// Check applies the rule to the pairs so far.
func (r StopRule) Check(pairs []Pair) StopState {
	st := StopState{Pairs: len(pairs), Rule: r}
	st.Intervals = PairedIntervals(pairs, r.Units, r.Confidence)
	for i := range st.Intervals {
		if st.Widest == nil || st.Intervals[i].HalfWidth > st.Widest.HalfWidth {
			st.Widest = &st.Intervals[i]
		}
	}
	st.Converged = len(pairs) >= r.MinPairs && st.Widest != nil && st.Widest.HalfWidth <= r.HalfWidth
	st.Done = st.Converged || len(pairs) >= r.MaxPairs
	return st
}

// String says why the comparison stopped or goes on.
func (st StopState) String() string {
	bound := fmt.Sprintf("±%g%%", st.Rule.HalfWidth*100)
	units := strings.Join(st.Rule.Units, ",")
	switch {
	case st.Widest == nil:
		return fmt.Sprintf("after %d pairs: no %s result on both sides to judge", st.Pairs, units)
	case st.Converged:
		return fmt.Sprintf("stopped after %d pairs: the %g%% interval of every median new/old ratio of %s is within %s (widest %s)",
			st.Pairs, st.Rule.Confidence*100, units, bound, st.Widest)
	case st.Done:
		return fmt.Sprintf("stopped at the maximum of %d pairs WITHOUT reaching %s: widest %s",
			st.Pairs, bound, st.Widest)
	}
	return fmt.Sprintf("after %d pairs: widest %s; going on to %s", st.Pairs, st.Widest, bound)
}
