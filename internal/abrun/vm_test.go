package abrun

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/flagvar"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// BenchmarkABProbe is a real RDMA WRITE ping-pong at 64 bytes, the
// benchmark TestRunnerRDMA compares with itself.
func BenchmarkABProbe(b *testing.B) {
	pair, c := testenv.MustPair(b, rdmalat.OpWrite, 64)
	if err := testenv.PrintConfig(os.Stdout, pair, c); err != nil {
		b.Fatal(err)
	}
	b.Run("size=64", func(b *testing.B) {
		rdmalat.Measure(b, pair, 64, c.Warmup, nil)
	})
}

// TestRunnerRDMA runs the interleaving runner on a real device (inside the
// VM under make test): this test binary as both sides, two pairs of
// BenchmarkABProbe, and checks what the comparison reads back.
func TestRunnerRDMA(t *testing.T) {
	testenv.MustHaveRDMA(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &Spec{
		Bins:  [2]string{self, self},
		Bench: "^BenchmarkABProbe$", Benchtime: "300x", Pairs: 2, CIUnits: "p50-ns",
		RunTimeout: 2 * time.Minute, OutDir: t.TempDir(),
	}
	s.Env[abtest.New] = flagvar.Strings{"RDMABENCH_WARMUP=50"}
	st, err := runInterleaved(t.Context(), s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pairs != 2 || st.Widest == nil || st.Widest.N != 2 {
		t.Errorf("stop state %s", st)
	}
	old, new, err := readSides(sideFile(s.OutDir, abtest.Old), sideFile(s.OutDir, abtest.New))
	if err != nil {
		t.Fatal(err)
	}
	k := abtest.Key{Name: "ABProbe/size=64", Unit: "p50-ns"}
	for side, rs := range []*abtest.Results{old, new} {
		var vals []float64
		for key, v := range rs.Values {
			if strings.HasPrefix(key.Name, k.Name) && key.Unit == k.Unit {
				vals = v
			}
		}
		if len(vals) != 2 || vals[0] <= 0 {
			t.Errorf("%s side: p50-ns values %v, want 2 positive; keys %v", abtest.Side(side), vals, rs.Keys)
		}
	}
	b, _ := os.ReadFile(sideFile(s.OutDir, abtest.New))
	for _, line := range []string{"rdma-device: ", "rdmabench-warmup: 50"} {
		if !strings.Contains(string(b), line) {
			t.Errorf("new.txt lacks %q:\n%s", line, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(s.OutDir, "order.txt")); string(b) != "pair 1 old\npair 1 new\npair 2 new\npair 2 old\n" {
		t.Errorf("order.txt:\n%s", b)
	}
}

// TestDuetRDMA runs a duet on a real device (inside the VM under make
// test): this test binary as both sides, one pair of BenchmarkABProbe
// processes alive at once taking turns of 100 round trips, and checks that
// the turns alternated, every burst paired and both sides' results read
// as they would alone.
func TestDuetRDMA(t *testing.T) {
	testenv.MustHaveRDMA(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &Spec{
		Bins:  [2]string{self, self},
		Bench: "^BenchmarkABProbe$", Benchtime: "1000x", Pairs: 1, CIUnits: "p50-ns",
		RunTimeout: 2 * time.Minute, OutDir: t.TempDir(), Duet: true, Burst: 100, Method: "sign",
		Gate: GateSpec{Metrics: "p50-ns,min-ns", Threshold: 0.05, Alpha: 0.05},
	}
	s.Env[abtest.New] = flagvar.Strings{"RDMABENCH_WARMUP=50"}
	if err := RunSides(t.Context(), s, io.Discard); err != nil {
		t.Fatal(err)
	}
	bs, err := readBurstsFile(filepath.Join(s.OutDir, burstsFile))
	if err != nil {
		t.Fatal(err)
	}
	var warm, bursts [2]int
	var turns []abtest.Side
	for _, b := range bs {
		switch b.b.Kind {
		case "warmup":
			warm[b.side]++
		case "burst":
			turns = append(turns, b.side)
			bursts[b.side]++
			if b.b.N != 100 || b.b.Min <= 0 || b.b.Median < b.b.Min || b.b.Label != "BenchmarkABProbe/size=64" {
				t.Errorf("burst %+v", b)
			}
		}
	}
	// 1000 samples in bursts of 100 (b.Loop may ask for more first).
	if warm != [2]int{1, 1} || bursts[0] != bursts[1] || bursts[0] < 10 {
		t.Errorf("warm-ups %v, bursts %v: want one warm-up and the same 10 or more bursts a side", warm, bursts)
	}
	// ABBA: every round of two turns has one of each side.
	for i := 0; i+1 < len(turns); i += 2 {
		if turns[i] == turns[i+1] {
			t.Errorf("round %d: both turns %s: %v", i/2+1, turns[i], turns)
			break
		}
	}
	names, rounds := burstRounds(bs, []string{"p50-ns"})
	if len(names) != 1 || len(rounds[names[0]]) != bursts[0] {
		t.Errorf("paired rounds %v of %d bursts a side", names, bursts[0])
	}
	old, new, err := readSides(sideFile(s.OutDir, abtest.Old), sideFile(s.OutDir, abtest.New))
	if err != nil {
		t.Fatal(err)
	}
	for side, rs := range []*abtest.Results{old, new} {
		if len(rs.Keys) == 0 {
			t.Errorf("%s side: no results", abtest.Side(side))
		}
	}
	b, _ := os.ReadFile(sideFile(s.OutDir, abtest.New))
	if !strings.Contains(string(b), "rdmabench-warmup: 50") {
		t.Errorf("new.txt lacks its own warm-up setting:\n%s", b)
	}
	t.Logf("turns: %d a side; first bursts' medians (ns):", bursts[0])
	for _, b := range bs[:min(len(bs), 12)] {
		t.Logf("  %s %s seq %d median %d min %d at %d µs", b.side, b.b.Kind, b.b.Seq, b.b.Median, b.b.Min, b.atUS)
	}
	way, _ := os.ReadFile(filepath.Join(s.OutDir, "way.txt"))
	if !strings.HasPrefix(string(way), "duet:") {
		t.Errorf("way.txt: %s", way)
	}
}
