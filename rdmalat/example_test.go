package rdmalat_test

import (
	"os"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/latency"
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
		pair, cfg := testenv.MustPair(b, rdmalat.OpWrite, 4096) // skips or fails as the environment says
		testenv.PrintConfig(os.Stdout, pair, cfg)

		b.Run("path=raw/size=64", func(b *testing.B) {
			rdmalat.Measure(b, pair, 64, cfg.Warmup, nil)
		})
		b.Run("path=mylib/size=64", func(b *testing.B) {
			rec := latency.NewRecorder(true) // true: report half the round trip
			for b.Loop() {
				start := time.Now()
				// ... one round trip through the library under test ...
				rec.Record(time.Since(start).Nanoseconds())
			}
			latency.Report(b, rec.Summary())
		})
	}
	_ = benchmarkMyLibrary
}
