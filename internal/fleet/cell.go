package fleet

import (
	"math"
	"slices"
	"strconv"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// A Cell is one pair's summary for one benchmark and unit: what the
// matrix prints, benchstat's median with its 95% confidence interval.
type Cell struct {
	Center   float64  // the median, in the tidied unit
	Range    string   // the interval as a percentage of Center ("4%"), or "∞", as benchstat prints it
	Warnings []string // benchstat's warnings (too few samples for an interval)
}

// A cell's summary is computed once, when its pair's values are all read,
// and only what the matrix prints is kept: the median (8 bytes) and an
// index (2 bytes) into the few distinct ranges and warnings. A 1000-node
// all-pairs matrix is 499,500 cells per table, and keeping every value for
// the end cost gigabytes.

// orders is benchmath's median interval for a sample size: the order
// statistics that bound it and the warnings, which depend on the size only.
type orders struct {
	ci       stats.QuantileCIResult
	warnings []string
}

// tails holds the distinct (range, warnings) of the cells; index 0 means
// "no cell".
type tails struct {
	list   []Cell // Center unused
	index  map[string]uint16
	byN    []*orders // by sample size
	key    []byte    // scratch
	sorted []float64 // scratch
}

// maxTails bounds the distinct ranges kept; a range past them (only a
// forged file makes so many) is shown as "?".
const maxTails = math.MaxUint16

func newTails() *tails {
	return &tails{list: []Cell{{}}, index: map[string]uint16{}}
}

// ordersFor returns the interval's order statistics and warnings for n
// values, computed the way benchmath.AssumeNothing.Summary does.
func (t *tails) ordersFor(n int) *orders {
	if n < len(t.byN) && t.byN[n] != nil {
		return t.byN[n]
	}
	if n >= len(t.byN) {
		t.byN = append(t.byN, make([]*orders, n+1-len(t.byN))...)
	}
	o := &orders{ci: stats.QuantileCI(n, 0.5, Confidence)}
	// The warnings of a sample of n distinct values: benchmath's own
	// wording, which depends on n alone.
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = float64(i + 1)
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), Confidence)
	for _, w := range s.Warnings {
		o.warnings = append(o.warnings, w.Error())
	}
	t.byN[n] = o
	return o
}

// summarise returns the median of vs and the index of its range and
// warnings; vs is sorted in place. The figures are benchmath's: the same
// order statistics, quantile and percentage (TestSummariseIsBenchmath).
func (t *tails) summarise(vs []float64) (float64, uint16) {
	sortSmall(vs)
	o := t.ordersFor(len(vs))
	s := stats.Sample{Xs: vs, Sorted: true}
	center := s.Quantile(o.ci.Quantile)
	lo, hi := math.Inf(-1), math.Inf(1)
	if o.ci.LoOrder >= 1 {
		lo = vs[o.ci.LoOrder-1]
	}
	if o.ci.HiOrder-1 < len(vs) {
		hi = vs[o.ci.HiOrder-1]
	}
	t.key = appendPctRange(t.key[:0], center, lo, hi)
	pct := len(t.key)
	for _, w := range o.warnings {
		t.key = append(t.key, 0)
		t.key = append(t.key, w...)
	}
	if i, ok := t.index[string(t.key)]; ok {
		return center, i
	}
	if len(t.list) >= maxTails {
		return center, t.intern("?", nil)
	}
	return center, t.intern(string(t.key[:pct]), o.warnings)
}

func (t *tails) intern(pct string, warnings []string) uint16 {
	key := pct
	for _, w := range warnings {
		key += "\x00" + w
	}
	if i, ok := t.index[key]; ok {
		return i
	}
	i := uint16(len(t.list))
	t.list = append(t.list, Cell{Range: pct, Warnings: warnings})
	t.index[key] = i
	return i
}

// appendPctRange appends benchmath.Summary.PctRangeString of an interval.
func appendPctRange(b []byte, center, lo, hi float64) []byte {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return append(b, "∞"...)
	}
	if sign(center) != sign(lo) || sign(center) != sign(hi) {
		return append(b, '?')
	}
	if center == 0 {
		return append(b, "0%"...)
	}
	v := math.Max(hi/center-1, 1-lo/center)
	b = strconv.AppendFloat(b, 100*v, 'f', 0, 64)
	return append(b, '%')
}

func sign(x float64) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// sortSmall sorts vs: by insertion for the few values of a cell, else
// with slices.Sort.
func sortSmall(vs []float64) {
	if len(vs) > 12 {
		slices.Sort(vs)
		return
	}
	for i := 1; i < len(vs); i++ {
		for j := i; j > 0 && vs[j] < vs[j-1]; j-- {
			vs[j], vs[j-1] = vs[j-1], vs[j]
		}
	}
}
