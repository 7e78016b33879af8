package abrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The recorded duet's verdict for machines: each benchmark and metric
// with the way it was judged, its estimate, interval, p, level and
// decision; the regressed one marked; the status the gate returned.
func TestVerdictFileOfADuet(t *testing.T) {
	code, _, vf := gateFilesJSON(t, filepath.Join("testdata", "selftimed"), "p50-ns,p99-ns", 10)
	if vf.Outcome != "regressed" || code != ExitRegressed || vf.Alpha != 0.01 || vf.Threshold != 0.05 {
		t.Errorf("status %d, verdict %+v", code, vf)
	}
	got := map[string]MetricVerdict{}
	for _, m := range vf.Metrics {
		got[m.Benchmark+" "+m.Unit+" "+string(m.JudgedBy)] = m
	}
	mine := got["BenchmarkMyPath/path=mine/size=64-4 p50-ns duet pairs of runs"]
	if mine.Estimate == nil || *mine.Estimate < 30 || mine.Lo == nil || mine.Hi == nil || mine.P == nil || mine.N != 10 || mine.Level <= 0 {
		t.Errorf("path=mine p50: %+v", mine)
	}
	raw := got["BenchmarkMyPath/path=raw/size=64 p50-ns duet turns"]
	if raw.Estimate == nil || raw.N != 10 || raw.Regressed {
		t.Errorf("path=raw p50: %+v", raw)
	}
	p99 := got["BenchmarkMyPath/path=mine/size=64-4 p99-ns U test over the runs"]
	if !p99.Regressed || !p99.Decided || p99.Decision != "different" || p99.Lo != nil {
		t.Errorf("path=mine p99: %+v", p99)
	}
	if len(vf.Metrics) != 4 {
		t.Errorf("%d metrics, want 4: %+v", len(vf.Metrics), vf.Metrics)
	}
}

// Written and read back, a verdict is the same, infinite bounds and all
// (JSON has no infinity: they are null).
func TestVerdictFileRoundTrip(t *testing.T) {
	one, half := 1.0, 0.5
	vf := &VerdictFile{Version: verdictVersion, Status: ExitUndecided, Outcome: "undecided", Alpha: 0.01, Threshold: 0.05,
		Metrics: []MetricVerdict{
			{Benchmark: "BenchmarkX-4", Unit: "p50-ns", JudgedBy: ByRuns, N: 2, Estimate: &one, Lo: finite(0), Hi: finite(math.Inf(1)), P: &half, Level: 0.004, Decision: "undecided"},
		},
		OneSided: []OneSided{{Benchmark: "BenchmarkY-4", Unit: "p50-ns", Side: "new"}}}
	name := filepath.Join(t.TempDir(), VerdictFileName)
	if err := WriteVerdict(name, vf); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := ReadVerdict(f)
	if err != nil || !reflect.DeepEqual(back, vf) {
		t.Errorf("read back %+v, %v\nwant %+v", back, err, vf)
	}
	if back.Metrics[0].Hi != nil {
		t.Errorf("an infinite bound read back as %v, want null", *back.Metrics[0].Hi)
	}
}

func TestReadVerdictRejects(t *testing.T) {
	for _, bad := range []string{
		"", "[]", `{"version": 2, "metrics": []}`, `{"version": 1, "metrics": [], "extra": 1}`,
		`{"version": 1, "metrics": []} {}`, `{"version": 1, "metrics": [{"estimate": "x"}]}`,
	} {
		if _, err := ReadVerdict(strings.NewReader(bad)); !errors.Is(err, ErrBadVerdict) {
			t.Errorf("%q: %v, want ErrBadVerdict", bad, err)
		}
	}
	huge := strings.NewReader(`{"version": 1, "outcome": "` + strings.Repeat("x", maxVerdictBytes) + `"}`)
	if _, err := ReadVerdict(huge); !errors.Is(err, ErrBadVerdict) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file over the bound: %v", err)
	}
}

// FuzzReadVerdict: any input is read or rejected, never a panic; what is
// read writes back to JSON that reads back the same.
func FuzzReadVerdict(f *testing.F) {
	f.Add([]byte(`{"version": 1, "status": 0, "outcome": "pass", "alpha": 0.01, "threshold": 0.05, "metrics": []}`))
	f.Add([]byte(`{"version": 1, "metrics": [{"benchmark": "BenchmarkX-4", "unit": "p50-ns", "judged_by": "duet turns", "n": 3, "estimate": 1.03, "lo": null, "hi": 1.1, "p": 0.2, "level": 0.0078, "decision": "undecided", "decided": false, "regressed": false}], "one_sided": [{"benchmark": "BenchmarkY", "unit": "p50-ns", "side": "old"}]}`))
	f.Add([]byte(`{"version": 1, "metrics": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		vf, err := ReadVerdict(bytes.NewReader(b))
		if err != nil {
			return
		}
		out, err := json.Marshal(vf)
		if err != nil {
			t.Fatalf("%+v does not write back: %v", vf, err)
		}
		back, err := ReadVerdict(bytes.NewReader(out))
		if err != nil || !reflect.DeepEqual(back, vf) {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", out, back, err, vf)
		}
	})
}
