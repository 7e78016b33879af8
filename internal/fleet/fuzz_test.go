package fleet

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParsePlan: any plan file is refused with an error or gives a plan
// whose every pair is two different nodes of the list, each node at most
// once in a round, and which reads back as written.
func FuzzParsePlan(f *testing.F) {
	f.Add("1 n1 n2\n1 n3 n4\n2 n1 n3\n")
	f.Add("# comment\n\n3 n2 n1\n1 n1 n2\n")
	f.Add("1 n1 n1\n")
	f.Add("0 n1 n2\n")
	f.Add("1 n1 n2\n1 n2 n3\n")
	f.Add("99999999999999999999 n1 n2\n")
	f.Fuzz(func(t *testing.T, in string) {
		nodes := []string{"n1", "n2", "n3", "n4"}
		p, err := ParsePlan(strings.NewReader(in), "plan.txt", nodes)
		if err != nil {
			return
		}
		checkPlan(t, p)
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatal(err)
		}
		q, err := ReadPlan(&b, "again")
		if err != nil {
			t.Fatalf("a written plan does not read back: %v\n%s", err, b.String())
		}
		if len(q.Steps()) != len(p.Steps()) {
			t.Fatalf("%d steps read back, %d written", len(q.Steps()), len(p.Steps()))
		}
	})
}

// FuzzReadPlan: a job directory's plan.txt, whatever it holds.
func FuzzReadPlan(f *testing.F) {
	if b, err := os.ReadFile(filepath.FromSlash("jobreport/testdata/job/plan.txt")); err == nil {
		f.Add(string(b)) // the VM has the package's testdata, not jobreport's
	}
	f.Add("# nodes: a b\n# pattern: all-pairs\n1 a b\n")
	f.Add("# nodes: a a\n# pattern: x\n1 a a\n")
	f.Add("# nodes:\n# pattern: \n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ReadPlan(strings.NewReader(in), "plan.txt")
		if err != nil {
			return
		}
		checkPlan(t, p)
	})
}

func checkPlan(t *testing.T, p *Plan) {
	t.Helper()
	known := map[string]bool{}
	for _, n := range p.Nodes {
		known[n] = true
	}
	for r, pairs := range p.Rounds {
		busy := map[string]bool{}
		for _, pair := range pairs {
			if pair.Src == pair.Dst || !known[pair.Src] || !known[pair.Dst] {
				t.Fatalf("round %d: pair %v", r+1, pair)
			}
			if busy[pair.Src] || busy[pair.Dst] {
				t.Fatalf("round %d: a node twice", r+1)
			}
			busy[pair.Src], busy[pair.Dst] = true, true
		}
	}
}

// FuzzReadPair: a pair file, whatever it holds, adds results of its own
// pair only, each a measurement, or nothing; the fast path reads what it
// takes exactly as benchfmt does; the analysis of what it added never
// prints NaN.
func FuzzReadPair(f *testing.F) {
	if b, err := os.ReadFile(filepath.FromSlash("jobreport/testdata/job/pairs/round01-n1-n4.txt")); err == nil {
		f.Add(string(b)) // the VM has the package's testdata, not jobreport's
	}
	f.Add("BenchmarkRDMAWrite/src=n1/dst=n4/size=2-4 5000 5260 ns/op 5260 p50-ns\n")
	f.Add("BenchmarkRDMAWrite/src=n2/dst=n3/size=2-4 5000 5260 ns/op 5260 p50-ns\n")
	f.Add("BenchmarkRDMAWrite/src=n1/dst=n4/size=2-4 5000 NaN ns/op -1 p50-ns\n")
	f.Add("BenchmarkRDMAWrite/size=2 1000 5 ns/op\n")
	f.Add("key: v\nkey: w\nother:\nBenchmarkRDMAWrite/src=n1/dst=n4-4 7 0 ns/op 12.5 p50-ns 0.125 MB/s\n")
	f.Fuzz(func(t *testing.T, in string) {
		checkFastPath(t, in, "n1", "n4")
		r := NewResults()
		err := r.ReadPair(strings.NewReader(in), "pair.txt", "n1", "n4")
		if err != nil && (len(r.pairOf) > 0 || len(r.Benches) > 0 || len(r.Units) > 0) {
			t.Fatalf("a refused file added results: %v", err)
		}
		for _, key := range r.pairOf {
			if src, dst := r.nodes[key>>32], r.nodes[uint32(key)]; src != "n1" || dst != "n4" {
				t.Fatalf("a result of %s -> %s", src, dst)
			}
		}
		for _, bench := range r.Benches {
			for _, unit := range r.Units {
				if c, ok := r.Cell(bench, unit, "n1", "n4"); ok {
					if math.IsNaN(c.Center) || math.IsInf(c.Center, 0) || c.Center < 0 {
						t.Fatalf("median %g", c.Center)
					}
					a := Analyse([]Measure{{Pair: Pair{"n1", "n4"}, Round: 1, Value: c.Center}, m("n2", "n3", 10)}, DefaultThresholds)
					var b strings.Builder
					a.Format(&b)
					if strings.Contains(b.String(), "NaN") {
						t.Fatalf("NaN in the analysis:\n%s", b.String())
					}
				}
			}
		}
		var b bytes.Buffer
		if err := r.WriteMatrix(&b, []string{"n1", "n4"}); err != nil {
			t.Fatal(err)
		}
	})
}

// checkFastPath fails t when the fast path takes a file and reads it
// otherwise than benchfile's reader does.
func checkFastPath(t *testing.T, in, src, dst string) {
	t.Helper()
	p := NewPairParser()
	for _, withConfig := range []bool{false, true} {
		var fast, slow PairFile
		fast.withConfig, slow.withConfig = withConfig, withConfig
		if !p.fast([]byte(in), src, dst, withConfig, &fast) {
			continue
		}
		if err := p.slow(strings.NewReader(in), "pair.txt", src, dst, withConfig, &slow); err != nil {
			t.Fatalf("the fast path took a file benchfmt refuses (%v):\n%q", err, in)
		}
		if !slices.Equal(fast.values, slow.values) || !slices.Equal(fast.runs, slow.runs) || withConfig && !slices.Equal(fast.config, slow.config) {
			t.Fatalf("fast path:\n%v\n%v\n%q\nbenchfmt:\n%v\n%v\n%q\ninput %q", fast.values, fast.runs, fast.config, slow.values, slow.runs, slow.config, in)
		}
	}
}

// FuzzSplitPairName: the pair parser's split gives SplitPairName's
// benchmark, src and dst, and fails where it fails.
func FuzzSplitPairName(f *testing.F) {
	for _, s := range []string{
		"RDMAWrite/src=n1/dst=n4/size=2-4", "RDMAWrite/src=n1/dst=n4", "RDMAWrite/size=2/src=a/dst=b-16",
		"X/src=/dst=b", "X/src=a/dst=b/src=c", "/src=a/dst=b", "X/src=a/dst=b-", "X/src=a/dst=b--4",
		"X-4/src=a-1/dst=b-2", "X/src=a/dst=b/-3", "src=a/dst=b", "X/src=a/dst=b/",
	} {
		f.Add(s)
	}
	p := NewPairParser()
	f.Fuzz(func(t *testing.T, name string) {
		bench, src, dst, err := SplitPairName([]byte(name))
		pn, ok := p.split([]byte(name))
		if ok != (err == nil) {
			t.Fatalf("%q: split ok %v, SplitPairName %v", name, ok, err)
		}
		if ok && (pn != pairName{bench, src, dst}) {
			t.Fatalf("%q: split %+v, SplitPairName %q %q %q", name, pn, bench, src, dst)
		}
	})
}
