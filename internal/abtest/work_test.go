package abtest

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// results builds one side's Results of one key from values.
func results(unit string, values ...float64) *Results {
	rs := NewResults()
	k := Key{Name: "RDMAWrite/size=2-4", Unit: unit}
	rs.Keys = []Key{k}
	rs.Values[k] = values
	return rs
}

func TestWorkRule(t *testing.T) {
	r := DefaultThresholds.WorkRule()
	for _, c := range []struct {
		name, unit        string
		old, new          []float64
		judged, regressed bool
		improved, tooWide bool
		change            float64
	}{
		// +140 of 829.1 (-DRB_EXTRA_INSNS=70): +16.9%, apart.
		{"extra work", "user-insns/op", []float64{829.1, 829.1, 829.1}, []float64{969.1, 969.1, 969.1}, true, true, false, false, 140 / 829.1},
		// One instruction in 873 is 0.115%: above 0.1%, and every run
		// apart.
		{"one instruction", "user-insns/op", []float64{873, 873, 873.1}, []float64{874, 874, 874.1}, true, true, false, false, 1 / 873.0},
		// A tenth of an instruction: 0.011%, within.
		{"rounding", "user-insns/op", []float64{873, 873, 873.1}, []float64{873.1, 873.1, 873.1}, true, false, false, false, 0.1 / 873},
		// +3.0% of kernel work: within 5% though apart.
		{"kernel within", "kernel-insns/op", []float64{28000, 28100, 28050}, []float64{28850, 28900, 28880}, true, false, false, false, 28880/28050.0 - 1},
		// +6% at the median, but one old run as high as a new one:
		// the runs spread as widely as the change.
		{"kernel overlap", "kernel-insns/op", []float64{28000, 28100, 30000}, []float64{29800, 29790, 30100}, false, false, false, true, 29800/28100.0 - 1},
		// -5.9%, apart: an improvement, not a failure.
		{"kernel better", "kernel-insns/op", []float64{28000, 28100, 28050}, []float64{26400, 26410, 26390}, true, false, true, false, 26400/28050.0 - 1},
		// 2 runs a side: too few, whatever the change.
		{"too few", "user-insns/op", []float64{829.1, 829.1}, []float64{969.1, 969.1}, false, false, false, false, 140 / 829.1},
		// A work unit without a threshold of its own: WorkOther (5%).
		{"other unit", "kernel-wait-insns/op", []float64{2500, 2400, 2600}, []float64{2550, 2600, 2620}, true, false, false, false, 2600/2500.0 - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := r
			r.Units = []string{c.unit}
			v := r.Judge(results(c.unit, c.old...), results(c.unit, c.new...))
			if len(v.Findings) != 1 {
				t.Fatalf("%d findings", len(v.Findings))
			}
			f := v.Findings[0]
			if f.Judged != c.judged || f.Regressed != c.regressed || f.Improved != c.improved || f.TooWide != c.tooWide {
				t.Errorf("judged %v regressed %v improved %v too wide %v, want %v %v %v %v",
					f.Judged, f.Regressed, f.Improved, f.TooWide, c.judged, c.regressed, c.improved, c.tooWide)
			}
			if math.Abs(f.Change-c.change) > 1e-12 {
				t.Errorf("change %g, want %g", f.Change, c.change)
			}
			err := v.Err()
			switch {
			case c.tooWide && !errors.Is(err, ErrWorkSpread), !c.tooWide && !c.judged && !errors.Is(err, ErrTooFew):
				t.Errorf("Err() = %v", err)
			case c.judged && err != nil:
				t.Errorf("Err() = %v, want nil", err)
			}
			if v.Failed() != c.regressed || v.Decided() != c.judged {
				t.Errorf("Failed %v Decided %v", v.Failed(), v.Decided())
			}
		})
	}
}

func TestWorkRuleNoWork(t *testing.T) {
	v := DefaultThresholds.WorkRule().Judge(results("p50-ns", 1, 2, 3), results("p50-ns", 1, 2, 3))
	if len(v.Findings) != 0 || v.Decided() || v.Err() == nil || !strings.Contains(v.Err().Error(), "rxevm -insns") {
		t.Errorf("no work metric: %d findings, Err %v", len(v.Findings), v.Err())
	}
}

func TestSplitWork(t *testing.T) {
	w, o := SplitWork(DefaultThresholds.Units)
	if fmt.Sprint(w) != "[user-insns/op kernel-insns/op kernel-work-insns/op]" || fmt.Sprint(o) != "[p50-ns p99-ns]" {
		t.Errorf("SplitWork: %v %v", w, o)
	}
	if g := DefaultThresholds.GateRule(); fmt.Sprint(g.Units) != "[p50-ns p99-ns]" {
		t.Errorf("the U test's units: %v", g.Units)
	}
	// Every default threshold is a work unit's, and gated by default.
	for u := range DefaultThresholds.WorkThresholds {
		if !IsWorkUnit(u) || !strings.Contains(fmt.Sprint(w), u) {
			t.Errorf("threshold of %s: not a gated work unit", u)
		}
	}
}

// TestWorkGolden judges recorded runs: BenchmarkRDMAWrite at 2 B, 3
// interleaved runs a side of 2000x in one boot of rxevm -insns (rdmaab
// -work), host load 13-15 on 2 CPUs; new built with -DRB_EXTRA_INSNS=70
// (+140 instructions per round trip). User work finds it exactly; kernel
// work spread 2.1% over old's runs on that host, within its threshold.
func TestWorkGolden(t *testing.T) {
	v := DefaultThresholds.WorkRule().Judge(readFile(t, "workab_old.txt"), readFile(t, "workab_new.txt"))
	var b strings.Builder
	if err := v.Print(&b); err != nil {
		t.Fatal(err)
	}
	if !v.Failed() || !v.Decided() || len(v.Findings) != 2 {
		t.Errorf("Failed %v Decided %v, %d findings", v.Failed(), v.Decided(), len(v.Findings))
	}
	if d := v.Findings[0].New.Median - v.Findings[0].Old.Median; math.Abs(d-140) > 0.05 {
		t.Errorf("user work grew by %g, want 140", d)
	}
	golden(t, "workab_gate.golden", b.String())
}

// TestWorkGoldenAA judges a recorded A/A: trial 7 of make validate-work's
// work-aa step (the same build both sides, 3 runs a side of 500x, host load
// 18-31, the co-tenant on), whose kernel work spread widest of the 7: the
// sides' medians 0.51% apart, their runs overlapping; it passes.
func TestWorkGoldenAA(t *testing.T) {
	v := DefaultThresholds.WorkRule().Judge(readFile(t, "workaa_old.txt"), readFile(t, "workaa_new.txt"))
	var b strings.Builder
	if err := v.Print(&b); err != nil {
		t.Fatal(err)
	}
	if v.Failed() || !v.Decided() || len(v.Findings) != 2 {
		t.Errorf("Failed %v Decided %v, %d findings", v.Failed(), v.Decided(), len(v.Findings))
	}
	golden(t, "workaa_gate.golden", b.String())
}
