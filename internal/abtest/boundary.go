package abtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/aclements/go-moremath/stats"
)

// The sequential rule looks after every round, and looking again and again
// at growing data raises the chance of a false "different". Holding each
// look to alpha/looks (Bonferroni) keeps that chance below alpha whatever
// the looks' dependence, but the looks of one growing sample are nearly
// the same test, and the early ones cannot reject at all (the signed-rank
// test's smallest p with 5 rounds is 1/16): Bonferroni spends alpha on
// them for nothing. Instead the rule holds every look to one level chosen
// so that, under the null hypothesis, the chance that any look falls below
// it is alpha: Pocock's flat boundary, found by simulating the test's
// p-values over the looks. For the sign and signed-rank tests this is
// distribution-free (under the null, any continuous distribution symmetric
// about 0 gives the same sequence of signs and ranks), so the simulation
// is exact up to its Monte Carlo error; for the t-test it assumes normal
// log ratios.

// boundaryRuns is the number of simulated sequences a level is read from:
// the standard error of the false-alarm rate at alpha 0.05 is 0.0015.
const boundaryRuns = 20000

type boundaryKey struct {
	method          PairedMethod
	alpha           float64
	minRounds, last int
}

var boundaryCache sync.Map // boundaryKey -> float64

// flatBoundary returns the level each look at minRounds, minRounds+1, ...,
// last rounds holds a two-sided p-value to, so that the chance of any
// look's p falling below it under the null is at most alpha. The level is
// never below the Bonferroni level alpha/looks, which bounds that chance
// for any dependence.
func flatBoundary(m PairedMethod, alpha float64, minRounds, last int) float64 {
	minRounds = max(1, minRounds)
	last = max(last, minRounds)
	looks := last - minRounds + 1
	if looks == 1 || alpha <= 0 {
		return alpha
	}
	key := boundaryKey{m, alpha, minRounds, last}
	if v, ok := boundaryCache.Load(key); ok {
		return v.(float64)
	}
	mins := simulateMinP(m, minRounds, last, boundaryRuns)
	slices.Sort(mins)
	// The largest level c with #(min p < c) <= target·runs: c is the
	// k-th smallest minimum, since the k values below it are the only
	// ones that reject. The target is alpha less two standard errors of
	// the simulation, so that the level's true rate is within alpha.
	runs := float64(len(mins))
	target := alpha - 2*math.Sqrt(alpha*(1-alpha)/runs)
	k := int(math.Floor(max(0, target) * runs))
	level := mins[min(k, len(mins)-1)]
	// Equal minima (discrete tests) at the cut would all reject or none:
	// the strict "<" in the rule takes none of them.
	level = max(level, alpha/float64(looks))
	boundaryCache.Store(key, level)
	return level
}

// simulateMinP returns, for runs sequences of last draws from the null
// (standard normal log ratios, a fixed seed so that a rule is the same
// every time), the smallest p-value of method m over the looks at
// minRounds..last rounds.
func simulateMinP(m PairedMethod, minRounds, last, runs int) []float64 {
	rng := rand.New(rand.NewPCG(0x5eed, uint64(m)))
	var ranks rankTables
	out := make([]float64, runs)
	xs := make([]float64, last)
	for r := range out {
		for i := range xs {
			xs[i] = rng.NormFloat64()
		}
		out[r] = minPOverLooks(m, xs, minRounds, &ranks)
	}
	return out
}

// minPOverLooks is the smallest p of method m over the prefixes of xs
// from minRounds long to all of it, computed incrementally.
func minPOverLooks(m PairedMethod, xs []float64, minRounds int, ranks *rankTables) float64 {
	best := 1.0
	var up, down int       // sign test
	var sum, sumSq float64 // t-test
	var abs []float64      // signed rank: |x| sorted, and the sign of each
	var pos []bool
	wPlus := 0
	for n, x := range xs {
		switch m {
		case SignTest:
			if x > 0 {
				up++
			} else {
				down++
			}
		case TTest:
			sum += x
			sumSq += x * x
		case SignedRank:
			// Inserting |x| at rank r (1-based) raises the rank of every
			// larger value by one: W+ gains the positives above it, and
			// r when x itself is positive.
			a := math.Abs(x)
			i, _ := slices.BinarySearch(abs, a)
			for _, p := range pos[i:] {
				if p {
					wPlus++
				}
			}
			abs = slices.Insert(abs, i, a)
			pos = slices.Insert(pos, i, x > 0)
			if x > 0 {
				wPlus += i + 1
			}
		}
		if n+1 < minRounds {
			continue
		}
		var p float64
		switch m {
		case SignTest:
			p = signP(up, down)
		case TTest:
			p = tTestP(sum, sumSq, n+1)
		case SignedRank:
			p = ranks.p(n+1, wPlus)
		}
		best = min(best, p)
	}
	return best
}

// tTestP is the two-sided one-sample t-test's p for a sample of n with
// the given sum and sum of squares.
func tTestP(sum, sumSq float64, n int) float64 {
	if n < 2 {
		return 1
	}
	fn := float64(n)
	mean := sum / fn
	v := (sumSq - fn*mean*mean) / (fn - 1)
	if v <= 0 {
		return 1
	}
	t := math.Abs(mean) / math.Sqrt(v/fn)
	return min(1, 2*(1-stats.TDist{V: fn - 1}.CDF(t)))
}

// rankTables holds, per number of rounds n, the two-sided exact p of the
// signed-rank statistic without ties, indexed by W+.
type rankTables struct{ byN [][]float64 }

func (t *rankTables) p(n, wPlus int) float64 {
	for len(t.byN) <= n {
		t.byN = append(t.byN, nil)
	}
	if t.byN[n] == nil {
		rank2 := make([]int, n)
		for i := range rank2 {
			rank2[i] = 2 * (i + 1)
		}
		total := n * (n + 1)
		dist := signedRankCounts(rank2, total) // over doubled ranks
		// Doubled ranks are even, so the statistic 2·W+ lands on even
		// indexes; cum[s] is P(2W+ <= s).
		cum := make([]float64, total+1)
		acc := 0.0
		for s := range cum {
			acc += dist[s]
			cum[s] = acc
		}
		ps := make([]float64, n*(n+1)/2+1)
		for w := range ps {
			lo := min(2*w, total-2*w)
			ps[w] = min(1, 2*cum[lo])
		}
		t.byN[n] = ps
	}
	return t.byN[n][wPlus]
}
