package abtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteSignedRankP enumerates every assignment of signs to the absolute
// values' ranks (mean ranks for ties), the test's definition.
func bruteSignedRankP(d []float64) float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	rank := make([]float64, len(nz))
	for i, x := range nz {
		var below, equal float64
		for _, y := range nz {
			switch {
			case math.Abs(y) < math.Abs(x):
				below++
			case math.Abs(y) == math.Abs(x):
				equal++
			}
		}
		rank[i] = below + (equal+1)/2
	}
	var obs, total float64
	for i, x := range nz {
		total += rank[i]
		if x > 0 {
			obs += rank[i]
		}
	}
	obs = min(obs, total-obs)
	var tail, all float64
	for mask := 0; mask < 1<<len(nz); mask++ {
		var w float64
		for i := range nz {
			if mask&(1<<i) != 0 {
				w += rank[i]
			}
		}
		all++
		if w <= obs+1e-9 {
			tail++
		}
	}
	return min(1, 2*tail/all)
}

func TestSignedRankExact(t *testing.T) {
	// A textbook pair of samples (paired differences of nine subjects):
	// W+ = 40 of 45, one-sided p = 10/512, two-sided 0.0390625.
	d := []float64{0.952, -0.147, 1.022, 0.43, 0.62, 0.59, 0.49, -0.08, 0.01}
	if r := ComparePaired(SignedRank, d, 0.95); !near(r.P, 20.0/512, 1e-12) {
		t.Errorf("p = %g, want %g", r.P, 20.0/512)
	}
	// All ten up: p = 2/1024, the smallest ten rounds can give.
	up := []float64{.01, .02, .03, .015, .025, .035, .012, .022, .032, .04}
	if r := ComparePaired(SignedRank, up, 0.95); !near(r.P, 2.0/1024, 1e-12) || r.Lo <= 1 || r.Hi <= r.Ratio || r.Ratio <= r.Lo {
		t.Errorf("all up: %v", r)
	}
	// Against enumeration, with ties and zeros.
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(12)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(7)-2) / 100 // ties and zeros on purpose
		}
		got := ComparePaired(SignedRank, d, 0.95).P
		if want := bruteSignedRankP(d); !near(got, want, 1e-9) {
			t.Fatalf("trial %d %v: p = %g, want %g", trial, d, got, want)
		}
	}
}

func TestSignedRankOneWildRound(t *testing.T) {
	// Eleven rounds near +3% and one at -40%: the t-test loses the change
	// in the outlier's variance; ranks keep it.
	d := []float64{.031, .028, .033, .029, .030, .032, .027, .034, .026, .0305, .0295, -.40}
	rank := ComparePaired(SignedRank, d, 0.95)
	tt := ComparePaired(TTest, d, 0.95)
	if rank.P >= 0.05 || tt.P < 0.05 {
		t.Errorf("signed-rank p = %g (want < 0.05), t-test p = %g (want >= 0.05)", rank.P, tt.P)
	}
	if c := rank.Change(); c < 0.02 || c > 0.04 {
		t.Errorf("estimate %+.2f%%, want about +3%%", 100*c)
	}
}

func TestSignedRankIntervalCovers(t *testing.T) {
	// The exact interval's coverage, by simulation with a fixed seed: at
	// 90% nominal, 2000 samples of 12 from a shifted normal.
	rng := rand.New(rand.NewPCG(3, 4))
	const shift = 0.03
	var in int
	for range 2000 {
		d := make([]float64, 12)
		for i := range d {
			d[i] = shift + 0.02*rng.NormFloat64()
		}
		r := ComparePaired(SignedRank, d, 0.90)
		if math.Log(r.Lo) <= shift && shift <= math.Log(r.Hi) {
			in++
		}
	}
	if c := float64(in) / 2000; c < 0.88 || c > 0.94 {
		t.Errorf("coverage %.3f at 90%% nominal", c)
	}
}

func TestWalshAverages(t *testing.T) {
	if got, want := walshAverages([]float64{3, 1}), []float64{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("walsh = %v, want %v", got, want)
	}
}
