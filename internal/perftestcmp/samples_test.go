package perftestcmp

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRTTsFromPerftest(t *testing.T) {
	// ib_write_lat's 11.587 us one-way is a 23174 ns round trip;
	// ib_read_lat's 37.7116 us is the round trip itself, 37712 ns.
	if got := rttsFromPerftest([]float64{11.587, 3422.34}, true); got[0] != 23174 || got[1] != 6844680 {
		t.Errorf("halved: %v", got)
	}
	if got := rttsFromPerftest([]float64{37.7116}, false); got[0] != 37712 {
		t.Errorf("whole: %v", got)
	}
}

func TestFiguresOf(t *testing.T) {
	// 100 round trips of 2000..2099 ns after 5 of 1 ms, halved. With the
	// 5 dropped: min 1000, max 1049.5, mean (2000+2099)/2/2 = 1024.75 ns;
	// p50 is rank 50 (2049 ns round trip, 1024.5 one-way), p99 rank 99
	// (2098): the histogram (3 digits: 2 ns buckets above 2048) gives the
	// highest value of its bucket, 2049 and 2099.
	var rtts []int64
	for range 5 {
		rtts = append(rtts, 1_000_000)
	}
	for i := range 100 {
		rtts = append(rtts, 2000+int64(i))
	}
	f, err := figuresOf(rtts, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Figures{"min": 1.0, "max": 1.0495, "mean": 1.02475, "p50": 1.0245, "p90": 1.0445, "p99": 1.0495, "stalls": 0}
	for k, w := range want {
		if math.Abs(f[k]-w) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, f[k], w)
		}
	}
	if _, ok := f["p99.9"]; ok {
		t.Error("p99.9 from 100 samples")
	}
	// Without the warm-up dropped, the 1 ms samples are the max, and
	// stalls: above 10 times the median.
	if f, _ = figuresOf(rtts, 0, true); f["max"] != 500 || f["stalls"] != 5 {
		t.Errorf("warm-up 0: max %v, want 500 us; stalls %v, want 5", f["max"], f["stalls"])
	}
	if _, err := figuresOf(rtts, 105, true); err == nil {
		t.Error("-warmup dropping every sample: no error")
	}
}

func TestReadOurSamples(t *testing.T) {
	dir := t.TempDir()
	// latency.RawWriter's format: one-way ns, .0 or .5.
	if err := os.WriteFile(filepath.Join(dir, "BenchmarkRDMAWrite_size-2.123.txt"), []byte("5000.5\n6000.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readOurSamples(dir, true)
	if err != nil || len(got) != 2 || got[0] != 10001 || got[1] != 12000 {
		t.Errorf("halved: %v, %v", got, err)
	}
	if got, _ := readOurSamples(dir, false); got[0] != 5001 { // 5000.5 rounds to 5001
		t.Errorf("whole: %v", got)
	}
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("1.0\n"), 0o644)
	if _, err := readOurSamples(dir, true); err == nil || !strings.Contains(err.Error(), "holds 2 sample files") {
		t.Errorf("two files: %v", err)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "x.txt"), []byte("12.0\nabc\n"), 0o644)
	if _, err := readOurSamples(bad, true); err == nil || !strings.Contains(err.Error(), `line 2: "abc"`) {
		t.Errorf("bad line: %v", err)
	}
}

func TestFreshDirLeavesOldRunsAlone(t *testing.T) {
	parent := t.TempDir()
	name := filepath.Join(parent, "round1-size2-ours-samples")
	got, err := freshDir(name)
	if err != nil || got != name {
		t.Fatalf("first: %q %v, want %q", got, err, name)
	}
	// An interrupted run left a samples file there: the next run gets a
	// directory of its own, and the old file stays.
	old := filepath.Join(name, "BenchmarkRDMAWrite_size-2.1.txt")
	if err := os.WriteFile(old, []byte("1000.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := freshDir(name)
	if err != nil || again == name || !strings.HasPrefix(again, name+"-") {
		t.Fatalf("second: %q %v", again, err)
	}
	if ents, _ := os.ReadDir(again); len(ents) != 0 {
		t.Errorf("%s is not empty: %v", again, ents)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the old run's file: %v", err)
	}
}
