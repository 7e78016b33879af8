package abrun

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/internal/abtest"
)

// A Basis is the way a metric was judged.
type Basis string

const (
	// ByTurns: a benchmark that takes turns in a duet (rdmalat's
	// Measure), one value per duet pair, the median log ratio of its
	// paired turns.
	ByTurns Basis = "duet turns"
	// ByRuns: a benchmark of a duet that takes no turns (it times
	// itself), one value per duet pair, the log ratio of its pair's two
	// runs: both processes ran at once, so the pair cancels the host's
	// drift as a turn does, if less finely.
	ByRuns Basis = "duet pairs of runs"
	// ByBoots: one value per pair of boots, the log ratio of the boots'
	// medians.
	ByBoots Basis = "boot pairs"
	// ByUTest: the Mann-Whitney U test over all the runs of each side
	// (interleaved runs, and the units a turn's summary lacks, p99).
	ByUTest Basis = "U test over the runs"
	// ByWork: the work rule over the runs of each side (abtest.WorkRule):
	// the median's change against the unit's threshold, and the sides'
	// ranges apart.
	ByWork Basis = "work rule (threshold, runs apart)"
)

// A pairedMetric is one metric of a paired verdict: its name ("benchmark
// unit"), one log ratio new/old per pair and the way they were taken.
type pairedMetric struct {
	name  string
	lrs   []float64
	basis Basis
}

// duetMetrics returns the duet's metrics of units, one log ratio per duet
// pair each: benchmarks that took turns by their turns, the others by
// their pairs of runs (pairs from old.txt and new.txt, the i-th run of
// each side being duet pair i), sorted by name. A benchmark is never left
// out for not taking turns: the gate judges every benchmark it is given.
func duetMetrics(bs []burstRec, pairs []abtest.Pair, old, new *abtest.Results, units []string) []pairedMetric {
	names, _ := burstRounds(bs, units)
	var ms []pairedMetric
	turns := map[string]bool{}
	for _, n := range names {
		ms = append(ms, pairedMetric{name: n, lrs: pairMedians(bs, n, units), basis: ByTurns})
		label, _, _ := strings.Cut(n, " ")
		turns[label] = true
	}
	keys, _ := abtest.KeysFor(old, new, units)
	for _, k := range keys {
		if turns["Benchmark"+k.Name] || turns["Benchmark"+withoutProcs(k.Name)] {
			continue
		}
		var lrs []float64
		for _, r := range abtest.Ratios(pairs, k) {
			if r > 0 && !math.IsInf(r, 0) {
				lrs = append(lrs, math.Log(r))
			}
		}
		ms = append(ms, pairedMetric{name: k.String(), lrs: lrs, basis: ByRuns})
	}
	slices.SortStableFunc(ms, func(a, b pairedMetric) int { return strings.Compare(a.name, b.name) })
	return ms
}

// withoutProcs drops a benchmark name's -GOMAXPROCS suffix ("X/size=2-4"
// to "X/size=2"), as a turn's label (testing.B.Name) lacks it.
func withoutProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 || strings.Trim(name[i+1:], "0123456789") != "" {
		return name
	}
	return name[:i]
}

// decideMetrics applies the sequential rule to the metrics, all one
// family (Holm across them).
func decideMetrics(rule abtest.SequentialRule, ms []pairedMetric) []abtest.PairedFinding {
	names := make([]string, len(ms))
	lrs := make([][]float64, len(ms))
	for i, m := range ms {
		names[i], lrs[i] = m.name, m.lrs
	}
	return rule.Decide(names, lrs)
}

// printOneSided names each key of units that only one side has: a
// benchmark added or removed by the change. Not compared, it does not
// count in the verdict either way; benchstat's table shows its values.
func printOneSided(w io.Writer, old, new *abtest.Results, units []string) {
	_, missing := abtest.KeysFor(old, new, units)
	for _, k := range missing {
		side := abtest.New
		if _, ok := old.Values[k]; ok {
			side = abtest.Old
		}
		fmt.Fprintf(w, "     %s: on the %s side only: not compared, and not counted in the verdict\n", k, side)
	}
}

// basisCounts says how many metrics were judged each way: "judged 3
// metrics: 2 by duet turns, 1 by duet pairs of runs".
func basisCounts(bases []Basis) string {
	if len(bases) == 0 {
		return "judged no metric"
	}
	var parts []string
	for _, b := range []Basis{ByTurns, ByRuns, ByBoots, ByUTest, ByWork} {
		if n := countOf(bases, b); n > 0 {
			parts = append(parts, fmt.Sprintf("%d by %s", n, b))
		}
	}
	return fmt.Sprintf("judged %d metrics: %s", len(bases), strings.Join(parts, ", "))
}

func countOf(bases []Basis, b Basis) int {
	n := 0
	for _, x := range bases {
		if x == b {
			n++
		}
	}
	return n
}
