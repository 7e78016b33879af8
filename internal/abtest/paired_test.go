package abtest

import (
	"math"
	"reflect"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestLogRatiosSkipsWhatHasNoRatio(t *testing.T) {
	got := LogRatios([]Round{{10, 11}, {0, 5}, {5, 0}, {-1, 2}, {math.Inf(1), 3}, {4, 4}})
	want := []float64{math.Log(1.1), 0}
	if len(got) != 2 || !near(got[0], want[0], 1e-12) || got[1] != 0 {
		t.Errorf("LogRatios = %v, want %v", got, want)
	}
}

func TestSignTestExact(t *testing.T) {
	// Ten rounds all up: two-sided p = 2 * 0.5^10.
	d := []float64{.01, .02, .03, .01, .02, .03, .01, .02, .03, .04}
	r := ComparePaired(SignTest, d, 0.95)
	if !near(r.P, 2*math.Pow(0.5, 10), 1e-12) {
		t.Errorf("p = %g, want %g", r.P, 2*math.Pow(0.5, 10))
	}
	if !near(r.Ratio, math.Exp(0.02), 1e-12) || r.Lo < 1 || r.Hi <= r.Ratio {
		t.Errorf("ratio %v [%v, %v]", r.Ratio, r.Lo, r.Hi)
	}
	// Ties do not count; 5 up 5 down is p = 1.
	if p := ComparePaired(SignTest, []float64{1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0}, 0.95).P; !near(p, 1, 1e-12) {
		t.Errorf("balanced: p = %g, want 1", p)
	}
	// 8 up of 10: P(X <= 2) = 56/1024, doubled.
	if p := signP(8, 2); !near(p, 2*56.0/1024, 1e-12) {
		t.Errorf("signP(8, 2) = %g, want %g", p, 2*56.0/1024)
	}
}

func TestTTestAgainstHandComputation(t *testing.T) {
	d := []float64{0.01, 0.03, 0.02, 0.04, 0.00}
	// mean 0.02, sd sqrt(0.00025) = 0.015811, t = 0.02/(0.015811/sqrt 5) = 2.8284, 4 dof:
	// two-sided p = 0.04742 (R: 2*pt(-2.828427, 4)); t(0.975, 4) = 2.776445.
	r := ComparePaired(TTest, d, 0.95)
	if !near(r.P, 0.04742, 5e-5) {
		t.Errorf("p = %g, want 0.04742", r.P)
	}
	half := 2.776445 * 0.0158114 / math.Sqrt(5)
	if !near(math.Log(r.Lo), 0.02-half, 1e-5) || !near(math.Log(r.Hi), 0.02+half, 1e-5) || !near(r.Ratio, math.Exp(0.02), 1e-12) {
		t.Errorf("ratio %v [%v, %v], want exp(0.02 ± %g)", r.Ratio, r.Lo, r.Hi, half)
	}
}

func TestHolmLevels(t *testing.T) {
	levels, sig := HolmLevels([]float64{0.04, 0.001, math.NaN(), 0.02}, 0.05)
	if want := []float64{0.05 / 2, 0.05 / 4, 0.05, 0.05 / 3}; !reflect.DeepEqual(levels, want) {
		t.Errorf("levels %v, want %v", levels, want)
	}
	// 0.001 < 0.0125, 0.02 > 0.0167 stops it: 0.04 fails though below its own level.
	if want := []bool{false, true, false, false}; !reflect.DeepEqual(sig, want) {
		t.Errorf("significant %v, want %v", sig, want)
	}
}

// shifted returns n log ratios alternating around log(1+shift) by ±spread.
func shifted(n int, shift, spread float64) []float64 {
	d := make([]float64, n)
	for i := range d {
		d[i] = math.Log(1 + shift)
		if i%2 == 0 {
			d[i] += spread
		} else {
			d[i] -= spread * 0.9
		}
	}
	return d
}

func TestDecide(t *testing.T) {
	r := SequentialRule{Method: SignTest, Alpha: 0.05, Threshold: 0.01, MaxLooks: 10, MinRounds: 20}
	fs := r.Decide([]string{"p50 +3%", "min same", "few", "wide"}, [][]float64{
		shifted(60, 0.03, 0.01),
		shifted(60, 0, 0.002),
		shifted(5, 0.03, 0.001),
		shifted(60, 0, 0.2),
	})
	want := []Decision{Different, Same, Undecided, Undecided}
	for i, f := range fs {
		if f.Decision != want[i] {
			t.Errorf("%s: %v (%v), want %v", f.Name, f.Decision, f.Result, want[i])
		}
	}
	if !fs[0].Regressed || fs[1].Regressed {
		t.Errorf("regressed: %v %v, want true false", fs[0].Regressed, fs[1].Regressed)
	}
	if Overall(fs) != Different {
		t.Errorf("overall %v", Overall(fs))
	}
	if Overall(fs[1:2]) != Same || Overall(fs[2:]) != Undecided {
		t.Errorf("overall of same: %v, of undecided: %v", Overall(fs[1:2]), Overall(fs[2:]))
	}
	// An improvement is different but no regression.
	imp := r.Decide([]string{"faster"}, [][]float64{shifted(60, -0.03, 0.01)})
	if imp[0].Decision != Different || imp[0].Regressed {
		t.Errorf("improvement: %+v", imp[0])
	}
	// A change below the threshold is not a regression even when certain.
	small := r.Decide([]string{"+0.5%"}, [][]float64{shifted(200, 0.005, 0.001)})
	if small[0].Decision != Different || small[0].Regressed {
		t.Errorf("+0.5%%: %+v", small[0])
	}
}

func TestLookLevelSpendsAlphaOverLooks(t *testing.T) {
	one := SequentialRule{Method: SignTest, Alpha: 0.05, MaxLooks: 1, MinRounds: 8}
	if la := one.LookAlpha(); la != 0.05 {
		t.Errorf("one look: level %g, want alpha", la)
	}
	r := SequentialRule{Method: SignTest, Alpha: 0.05, Threshold: 0.01, MaxLooks: 10, MinRounds: 1}
	la := r.LookAlpha()
	if la < 0.005 || la >= 0.05 {
		t.Fatalf("10 looks: level %g, want between Bonferroni's 0.005 and 0.05", la)
	}
	// 8 of 8 up (p = 0.0078) is held to that level; 5 of 5 (p = 0.0625)
	// is not significant at any look of alpha 0.05.
	fs := r.Decide([]string{"x"}, [][]float64{{.1, .1, .1, .1, .1, .1, .1, .1}})
	if got := fs[0].Decision == Different; got != (0.0078125 < la) {
		t.Errorf("p=%g at level %g: decision %v", fs[0].Result.P, la, fs[0].Decision)
	}
	if fs := r.Decide([]string{"x"}, [][]float64{{.1, .1, .1, .1, .1}}); fs[0].Decision == Different {
		t.Errorf("5 of 5 up judged different at level %g", la)
	}
}

func TestParsePairedMethod(t *testing.T) {
	for s, want := range map[string]PairedMethod{"sign": SignTest, "t": TTest, "rank": SignedRank, "wilcoxon": SignedRank} {
		if m, err := ParsePairedMethod(s); err != nil || m != want {
			t.Errorf("%q: %v %v", s, m, err)
		}
	}
	if _, err := ParsePairedMethod("student"); err == nil {
		t.Error("student accepted")
	}
}
