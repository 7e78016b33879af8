// Package mybench is a user's own project that benchmarks its RDMA path
// with rdmabench, as the README shows: TestOwnProject commits it twice in
// a throwaway repository, the second time with the constants below
// changed, and gates the change with rdmaab.
package mybench

import (
	"os"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// The user's code under test: the bytes its RDMA path sends, and the work
// its own code does per message.
const (
	rawBytes  = 64
	ownWorkNS = 2000
)

func BenchmarkMyPath(b *testing.B) {
	pair, cfg := testenv.MustPair(b, rdmalat.OpWrite, 4096)
	testenv.PrintConfig(os.Stdout, pair, cfg)

	b.Run("path=raw/size=64", func(b *testing.B) {
		rdmalat.Measure(b, pair, rawBytes, cfg.Warmup, nil)
	})
	b.Run("path=mine/size=64", func(b *testing.B) {
		rec := latency.NewRecorder(false)
		for b.Loop() {
			start := time.Now()
			for time.Since(start) < ownWorkNS*time.Nanosecond {
			}
			rec.Record(time.Since(start).Nanoseconds())
		}
		latency.Report(b, rec.Summary())
	})
}
