package abtest

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// offsets draws n log ratios around shift with the spread of duet pairs in
// the soft-RoCE VM (each process's own offset: sd about 4%).
func offsets(seed uint64, n int, shift float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = shift + 0.04*rng.NormFloat64()
	}
	return xs
}

func TestGateOutcomes(t *testing.T) {
	r := SequentialRule{Method: SignedRank, Alpha: 0.05, Threshold: 0.01, MinRounds: 3, MaxLooks: 58} // -count 60
	cases := []struct {
		name string
		lrs  []float64
		want GateOutcome
		why  string
	}{
		{"a regression, found", offsets(1, 40, 0.05), GateFail, "worse by more than 1%"},
		{"no change, rounds left", offsets(2, 30, 0), GateUndecided, "more rounds (-count) would decide"},
		{"no change, every round run", offsets(3, 60, 0), GatePass, "no regression found in 60 rounds"},
		{"an unconfirmed regression after every round", []float64{0.3, -0.01, 0.2, 0.02, -0.3, 0.25}, GateUndecided, "estimate is worse by more than 1% but not significantly"},
		{"the same within the threshold", offsets(4, 60, 0)[:0:0], GateUndecided, ""},
	}
	// The last case, refilled: tiny offsets, decided "same" early.
	cases[4].lrs = make([]float64, 20)
	for i := range cases[4].lrs {
		cases[4].lrs[i] = 0.0005 * float64(i%5-2)
	}
	cases[4].want, cases[4].why, cases[4].name = GatePass, "every metric decided", "same, decided early"
	for _, c := range cases {
		rule := r
		if c.name == "an unconfirmed regression after every round" {
			rule.MaxLooks = 4 // -count 6: every round ran
		}
		fs := rule.Decide([]string{"p50"}, [][]float64{c.lrs})
		got, why := rule.Gate(fs)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %v %q (finding %s %s), want %v %q", c.name, got, why, fs[0].Decision, fs[0].Result, c.want, c.why)
		}
	}
}

// At the duet's spread and rdmaab's defaults (alpha 0.01, -count 80 in
// make compare-commits), an A/A passes in nearly every trial (it fails
// only as a false alarm, about alpha/2 of the time: the gate fails
// regressions only), and a +3.4% change (the validation's delay build)
// fails nearly always and never passes.
func TestGateAtTheDuetsSpread(t *testing.T) {
	r := SequentialRule{Method: SignedRank, Alpha: 0.01, Threshold: 0.01, MinRounds: 3, MaxLooks: 78}
	var aa, ab [3]int
	const trials = 200
	for seed := range uint64(trials) {
		for k, shift := range []float64{0, 0.034} {
			xs := offsets(100+seed, 80, shift)
			out := GateUndecided
			for n := r.MinRounds; n <= len(xs); n++ { // stop as the conductor does
				if out, _ = r.Gate(r.Decide([]string{"p50"}, [][]float64{xs[:n]})); out != GateUndecided {
					break
				}
			}
			if k == 0 {
				aa[out]++
			} else {
				ab[out]++
			}
		}
	}
	t.Logf("A/A: pass %d, fail %d, undecided %d; A/B +3.4%%: pass %d, fail %d, undecided %d of %d", aa[GatePass], aa[GateFail], aa[GateUndecided], ab[GatePass], ab[GateFail], ab[GateUndecided], trials)
	if aa[GateFail] > trials*2/100 || aa[GatePass] < trials*95/100 {
		t.Errorf("A/A: %v (pass, fail, undecided)", aa)
	}
	if ab[GatePass] > 0 || ab[GateFail] < trials*97/100 {
		t.Errorf("A/B: %v (pass, fail, undecided)", ab)
	}
}
