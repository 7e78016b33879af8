// Package rdmalat measures RDMA latency the way perftest's ib_write_lat,
// ib_read_lat, ib_send_lat and ib_atomic_lat do, inside a Go program.
//
// An Endpoint is one side: a device context, protection domain, queue
// pair, completion queues and a registered buffer (EndpointConfig says
// which operation, transport and sizes). A Pair joins two endpoints,
// either in this process (NewLoopback: the initiator and a localResponder
// on two pinned threads) or across nodes (DialPeer: this process's
// initiator against an rdmapeer on another host). Pair.Start begins a Run,
// whose Next returns one round trip's latency, measured by a C loop
// (internal/loops) that mirrors perftest's for the operation; Measure is
// the body of a testing.B benchmark built on a Pair, recording every
// sample into a latency.Recorder and reporting perftest's statistics as
// benchmark metrics.
//
// The engines mirror perftest's semantics where users compare against it:
// the same turn-taking, signalling, inline defaults (InlinePerftest), and
// halving of round trips for write and send but not for read and atomics.
// Where they differ (a monotonic clock instead of cycle counters, a
// warm-up, deadlines on every wait) the field comments say so.
//
// # A benchmark of one's own
//
// A benchmark in another module (an RDMA library, say) measures its own
// round trip next to the raw one, with the same metrics, so that
// benchstat compares the two column for column. testenv.MustPair builds
// the pair from the same RDMABENCH_ variables as rdmabench's own
// benchmarks (loopback by default, two-node with RDMABENCH_PEER), and
// skips or fails the benchmark as they say when no device is there;
// testenv.PrintConfig labels the results with the configuration lines.
// A file of the other module's, name_test.go:
//
//	import (
//		"os"
//		"testing"
//		"time"
//
//		"github.com/rdmabench/rdmabench/latency"
//		"github.com/rdmabench/rdmabench/rdmalat"
//		"github.com/rdmabench/rdmabench/testenv"
//	)
//
//	func BenchmarkMyLibrary(b *testing.B) {
//		pair, cfg := testenv.MustPair(b, rdmalat.OpWrite, 4096) // skips or fails as the environment says
//		testenv.PrintConfig(os.Stdout, pair, cfg)
//
//		b.Run("path=raw/size=64", func(b *testing.B) {
//			rdmalat.Measure(b, pair, 64, cfg.Warmup, nil)
//		})
//		b.Run("path=mylib/size=64", func(b *testing.B) {
//			rec := latency.NewRecorder(true) // true: report half the round trip
//			for b.Loop() {
//				start := time.Now()
//				// ... one round trip through the library under test ...
//				rec.Record(time.Since(start).Nanoseconds())
//			}
//			latency.Report(b, rec.Summary())
//		})
//	}
//
// Run it with go test -bench=MyLibrary -count=10, or through the
// soft-RoCE VM with go test -exec rxevm; compare two runs with benchstat.
// The same code is Example_benchmark, which go test compiles; a test
// keeps the two alike.
package rdmalat
