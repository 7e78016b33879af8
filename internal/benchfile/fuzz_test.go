package benchfile

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// FuzzRead: any input ends in results that are measurements, at most
// MaxSkipped errors kept, and no panic.
func FuzzRead(f *testing.F) {
	f.Add([]byte(output))
	f.Add([]byte("BenchmarkX 100 NaN ns/op\nBenchmarkX -5 3 ns/op\nBenchmarkX 1 1e308 p50-ns\n"))
	f.Add([]byte("Unit p50-ns better=lower assume=nothing\nBenchmarkX/src=a/dst=b-4 1 2 ns/op 3 p50-ns\n# warning (vm): x\n"))
	f.Add([]byte("key: value\nBenchmarkX 1 2 ns/op\nkey:\nBenchmarkX 1 +Inf ns/op\n"))
	for _, p := range []string{"../summary/testdata/bench.txt", "../fleet/jobreport/testdata/job/pairs/round01-n1-n4.txt"} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, m := range []Malformed{Fail, Skip} {
			var comments int
			info, _ := ReadOptions(strings.NewReader(string(in)), "fuzz.txt", Options{Malformed: m, Comment: func(l []byte) {
				if len(l) == 0 || l[0] != '#' || len(l) > MaxLine {
					t.Fatalf("comment hook given %q", l)
				}
				comments++
			}}, func(res *benchfmt.Result) error {
				if res.Iters < 1 {
					t.Fatalf("result with %d iterations", res.Iters)
				}
				for _, v := range res.Values {
					if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || v.Value < 0 || v.Value > MaxValue {
						t.Fatalf("result value %g %s", v.Value, v.Unit)
					}
				}
				return nil
			})
			if len(info.Skipped) > MaxSkipped || info.SkippedCount < len(info.Skipped) {
				t.Fatalf("%d skipped kept of %d", len(info.Skipped), info.SkippedCount)
			}
		}
	})
}
