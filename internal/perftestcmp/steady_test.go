package perftestcmp

import (
	"math"
	"strings"
	"testing"
)

func TestShiftOf(t *testing.T) {
	run := func(parts ...[2]int64) []int64 { // {value, count} in run order
		var out []int64
		for _, p := range parts {
			for range p[1] {
				out = append(out, p[0])
			}
		}
		return out
	}
	outlier := run([2]int64{100, 400})
	outlier[7] = 1e6
	for _, c := range []struct {
		name string
		rtts []int64
		want float64
	}{
		{"steady", run([2]int64{100, 400}), 1},
		// 400 samples make stretches of 40: five at 100, five at 150.
		{"a switch halfway", run([2]int64{100, 200}, [2]int64{150, 200}), 1.5},
		// One slow sample moves no stretch's median.
		{"one outlier", outlier, 1},
		// The first stretch, 20 at 100 then 20 at 110, has the even
		// count's median (100+110)/2 = 105; the others 100.
		{"even median", run([2]int64{100, 20}, [2]int64{110, 20}, [2]int64{100, 360}), 1.05},
		// 199 samples: stretches of 19, under shiftMinPart.
		{"too short", run([2]int64{100, 199}), math.NaN()},
		{"zero median", run([2]int64{0, 200}, [2]int64{100, 200}), math.NaN()},
	} {
		got := shiftOf(c.rtts)
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: shiftOf = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSteadinessWarning(t *testing.T) {
	// 10 rounds, both sides: k of the 20 runs changed speed.
	sums := func(k int) []SizeSummary {
		var smp []Sample
		for i := range 10 {
			pt, ours := 1.01, 1.02
			if 2*i < k {
				pt = 1.3
			}
			if 2*i+1 < k {
				ours = 1.4
			}
			smp = append(smp, Sample{Round: i + 1, Perftest: Figures{"shift": pt}, Ours: Figures{"shift": ours}})
		}
		// A round without perftest is not counted.
		smp = append(smp, Sample{Round: 11, Ours: Figures{"shift": 2}})
		return []SizeSummary{{Tool: tools[0], Size: 2, Samples: smp}, {Tool: tools[1], Size: 2}}
	}
	if w := steadinessWarning(sums(2)); w != "" {
		t.Errorf("2 of 20 runs (10%%, not over it): warned %q", w)
	}
	w := steadinessWarning(sums(3))
	if !strings.Contains(w, "of the runs of write 2 (3 of 20):") || strings.Contains(w, "read") {
		t.Errorf("3 of 20 runs: warning %q, want one that names write 2 (3 of 20) alone", w)
	}
	if got, want := steadinessLine(sums(3)[0].Samples), "speed within runs: 3 of 20 runs changed speed mid-run (a tenth of the run's median 1.2x another's): perftest 2, ours 1"; got != want {
		t.Errorf("steadinessLine = %q, want %q", got, want)
	}
	if got := steadinessLine([]Sample{{Perftest: Figures{}, Ours: Figures{}}}); got != "speed within runs: runs too short to tell" {
		t.Errorf("without shifts: %q", got)
	}
}

func TestFiguresRecordShift(t *testing.T) {
	// 1000 round trips, the first 200 a warm-up at 900 ns; then 400 at 100
	// and 400 at 150: stretches of 80, five at each level.
	var rtts []int64
	for i := range 1000 {
		switch {
		case i < 200:
			rtts = append(rtts, 900)
		case i < 600:
			rtts = append(rtts, 100)
		default:
			rtts = append(rtts, 150)
		}
	}
	f, err := figuresOf(rtts, 200, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := f["shift"]; math.Abs(got-1.5) > 1e-12 {
		t.Errorf("shift = %v, want 1.5 (the warm-up left out)", got)
	}
	f, err = figuresOf(rtts[:300], 200, false)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f["shift"]; ok {
		t.Errorf("100 samples after the warm-up: shift %v, want none (stretches under %d)", v, shiftMinPart)
	}
}
