package rdmabench

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// BenchmarkRDMAWrite measures RDMA WRITE ping-pong latency like perftest's
// ib_write_lat: one sub-benchmark per message size (RDMABENCH_SIZES), every
// time metric one-way latency (half a round trip), ns/op included. The
// connection is built once, here in the parent, for every size and -count
// repetition; the configuration lines print before the first result.
func BenchmarkRDMAWrite(b *testing.B) {
	if err := rdmalat.CheckCPUFlag(); err != nil {
		b.Fatal(err) // before the connection is built
	}
	c := testenv.MustLoad(b)
	pair, c := testenv.MustPair(b, slices.Max(c.Sizes))
	if err := testenv.PrintConfig(os.Stdout, pair, c); err != nil {
		b.Fatal(err)
	}
	for _, size := range c.Sizes {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			rdmalat.Measure(b, pair, size, c.Warmup, samplesFile(b, c))
		})
	}
}

// samplesFile opens the raw-sample file of this run of b when
// RDMABENCH_SAMPLES_DIR is set: one file per sub-benchmark and repetition.
func samplesFile(b *testing.B, c testenv.Config) io.Writer {
	if c.SamplesDir == "" {
		return nil
	}
	base := strings.NewReplacer("/", "_", "=", "-").Replace(b.Name())
	f, err := os.CreateTemp(c.SamplesDir, base+".*.txt") // the directory was checked by MustPair
	if err != nil {
		b.Fatalf("%s=%s: %v", testenv.EnvSamplesDir, c.SamplesDir, err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}
