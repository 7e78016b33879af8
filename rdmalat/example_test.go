package rdmalat_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// A benchmark in another module (an RDMA library, say) measures its own
// round trip next to the raw one, with the same metrics, so that benchstat
// compares the two column for column. The pair comes from the same
// RDMABENCH_ variables as rdmabench's own benchmarks: loopback by default,
// two-node with RDMABENCH_PEER. Run it with go test -bench, or through the
// soft-RoCE VM with go test -exec rxevm.
func Example_benchmark() {
	benchmarkMyLibrary := func(b *testing.B) {
		pair, cfg := testenv.MustPair(b, 4096) // skips or fails as the environment says
		testenv.PrintConfig(os.Stdout, pair, cfg)

		b.Run("path=raw/size=64", func(b *testing.B) {
			rdmalat.Measure(b, pair, 64, cfg.Warmup, nil)
		})
		b.Run("path=mylib/size=64", func(b *testing.B) {
			rec := rdmalat.NewRecorder(true) // true: report half the round trip
			for b.Loop() {
				start := time.Now()
				// ... one round trip through the library under test ...
				rec.Record(time.Since(start).Nanoseconds())
			}
			rdmalat.Report(b, rec.Summary())
		})
	}
	_ = benchmarkMyLibrary
}

// Recording and reporting need no device: any round-trip times go in, the
// one-way statistics come out.
func ExampleRecorder() {
	rec := rdmalat.NewRecorder(true)
	for _, rtt := range []int64{2000, 2200, 2400, 2600, 9000} { // ns
		rec.Record(rtt)
	}
	s := rec.Summary()
	p50, _ := s.Percentile(500000)
	fmt.Printf("n=%d min=%.0f p50=%.0f max=%.0f mean=%.0f ns one-way\n", s.Count, s.Min, p50, s.Max, s.Mean)
	// Output: n=5 min=1000 p50=1200 max=4500 mean=1820 ns one-way
}
