package abtest

import (
	"math"
	"slices"
)

// Wilcoxon's signed-rank test, exact, with the Hodges-Lehmann estimate and
// its interval. In the soft-RoCE VM most duet pairs agree to about 1% and a
// few land 5-8% off (a stalled turn, a process the host descheduled): the
// t-test's standard deviation takes those few at full weight, the sign
// test throws away how far each pair moved; ranks keep the order of sizes
// and bound what one wild pair can do.

// signedRank returns the two-sided exact p-value of the signed-rank
// statistic of d (zeros dropped, ties given their mean rank), the
// Hodges-Lehmann estimate (the median of the Walsh averages) and its
// interval at confidence.
func signedRank(d []float64, confidence float64) (p, est, lo, hi float64) {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	walsh := walshAverages(d)
	est = median(walsh)
	lo, hi = math.Inf(-1), math.Inf(1)
	if len(nz) == 0 {
		if len(d) > 0 {
			lo, hi = 0, 0 // every round the same on both sides
		}
		return 1, est, lo, hi
	}
	// Twice the ranks are integers even with ties (mean ranks are
	// halves), so the exact null distribution is a count over integers.
	abs := make([]float64, len(nz))
	for i, x := range nz {
		abs[i] = math.Abs(x)
	}
	order := make([]int, len(nz))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case abs[a] < abs[b]:
			return -1
		case abs[a] > abs[b]:
			return 1
		}
		return 0
	})
	rank2 := make([]int, len(nz)) // twice the rank
	for i := 0; i < len(order); {
		j := i
		for j+1 < len(order) && abs[order[j+1]] == abs[order[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			rank2[order[k]] = i + j + 2 // 2 × the mean of ranks i+1 .. j+1
		}
		i = j + 1
	}
	var wPlus, total int
	for i, x := range nz {
		total += rank2[i]
		if x > 0 {
			wPlus += rank2[i]
		}
	}
	dist := signedRankCounts(rank2, total)
	w := min(wPlus, total-wPlus)
	var tail float64
	for s := 0; s <= w; s++ {
		tail += dist[s]
	}
	p = min(1, 2*tail)

	// The interval: the k-th smallest and largest Walsh averages, k the
	// largest count whose lower tail is at most (1-confidence)/2. Without
	// ties the rank sum counts the positive Walsh averages, so this is
	// exact; with ties it is the usual approximation.
	cdist := signedRankCounts(plainRanks2(len(d)), len(d)*(len(d)+1))
	alpha := (1 - confidence) / 2
	var cum float64
	k := -1 // Walsh averages below the lower limit
	for s := 0; s < len(cdist) && cum+cdist[s] <= alpha; s += 2 {
		cum += cdist[s]
		k++
	}
	if k >= 0 && k < len(walsh) {
		lo, hi = walsh[k], walsh[len(walsh)-1-k]
	}
	return p, est, lo, hi
}

// signedRankCounts returns, for every sum s of a subset of the (doubled)
// ranks, the probability that a random assignment of signs gives W+ = s.
func signedRankCounts(rank2 []int, total int) []float64 {
	dist := make([]float64, total+1)
	dist[0] = 1
	for _, r := range rank2 {
		for s := total; s >= r; s-- {
			dist[s] = (dist[s] + dist[s-r]) / 2
		}
		for s := r - 1; s >= 0; s-- {
			dist[s] /= 2
		}
	}
	return dist
}

func plainRanks2(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = 2 * (i + 1)
	}
	return r
}

// walshAverages returns the sorted (d[i]+d[j])/2 over i <= j.
func walshAverages(d []float64) []float64 {
	w := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	return w
}

func median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
