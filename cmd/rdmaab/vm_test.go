package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/abtest"
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
	s := &runSpec{
		bins:  [2]string{self, self},
		bench: "^BenchmarkABProbe$", benchtime: "300x", pairs: 2, ciUnits: "p50-ns",
		runTimeout: 2 * time.Minute, outDir: t.TempDir(),
	}
	s.env[abtest.New] = multiFlag{"RDMABENCH_WARMUP=50"}
	st, err := runInterleaved(t.Context(), s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pairs != 2 || st.Widest == nil || st.Widest.N != 2 {
		t.Errorf("stop state %s", st)
	}
	old, new, err := readSides(sideFile(s.outDir, abtest.Old), sideFile(s.outDir, abtest.New))
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
	b, _ := os.ReadFile(sideFile(s.outDir, abtest.New))
	for _, line := range []string{"rdma-device: ", "rdmabench-warmup: 50"} {
		if !strings.Contains(string(b), line) {
			t.Errorf("new.txt lacks %q:\n%s", line, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(s.outDir, "order.txt")); string(b) != "pair 1 old\npair 1 new\npair 2 new\npair 2 old\n" {
		t.Errorf("order.txt:\n%s", b)
	}
}
