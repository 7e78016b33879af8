package rdmabench

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// The benchmarks below are perftest's latency tests, one per operation,
// each with one sub-benchmark per message size (RDMABENCH_SIZES). The
// connection is built once, in the parent, for every size and -count
// repetition, and the configuration lines print before the first result.
// RDMABENCH_TRANSPORT (rc, uc, ud) and RDMABENCH_EVENTS choose the variant
// for the whole run and are recorded in the rdma-transport and
// rdma-completion lines, so that benchmark names stay the same across
// variants and benchstat -col rdma-transport compares them.
//
// Every time metric of the ping-pong tests (write, write_imm, send,
// send_imm) is one-way latency, half a round trip, as perftest reports
// them; READ and atomics report the whole operation, as ib_read_lat and
// ib_atomic_lat do.

// BenchmarkRDMAWrite is ib_write_lat: RDMA WRITE ping-pong, each side
// busy-polling the last byte of its buffer.
func BenchmarkRDMAWrite(b *testing.B) { benchmarkOp(b, spec.Write) }

// BenchmarkRDMAWriteImm is ib_write_lat --write_with_imm: each side waits
// for a receive completion carrying the immediate instead of polling
// memory.
func BenchmarkRDMAWriteImm(b *testing.B) { benchmarkOp(b, spec.WriteImm) }

// BenchmarkRDMARead is ib_read_lat: the initiator alone posts one RDMA
// READ at a time and polls its completion.
func BenchmarkRDMARead(b *testing.B) { benchmarkOp(b, spec.Read) }

// BenchmarkRDMASend is ib_send_lat: SEND/RECV ping-pong with receives
// posted ahead (over UD with the 40-byte GRH and a Q_Key).
func BenchmarkRDMASend(b *testing.B) { benchmarkOp(b, spec.Send) }

// BenchmarkRDMASendImm is ib_send_lat --send_with_imm.
func BenchmarkRDMASendImm(b *testing.B) { benchmarkOp(b, spec.SendImm) }

// BenchmarkRDMAAtomic is ib_atomic_lat, 8 bytes: op=fetch_add (perftest's
// default, adding 1) and op=compare_swap (-A CMP_AND_SWAP; here each
// compare matches, so each operation swaps).
func BenchmarkRDMAAtomic(b *testing.B) {
	for _, op := range []spec.Op{spec.FetchAdd, spec.CompareSwap} {
		b.Run("op="+op.String(), func(b *testing.B) { benchmarkOp(b, op) })
	}
}

// benchmarkOp measures op on the device, or, when RDMABENCH_DEVICE names
// several (rails), on each in turn under /rail=DEV, each rail with its own
// configuration lines (rdma-device names it).
func benchmarkOp(b *testing.B, op spec.Op) {
	if err := rdmalat.CheckCPUFlag(); err != nil {
		b.Fatal(err) // before the connection is built
	}
	rails := testenv.MustRails(b)
	if len(rails) == 0 {
		benchmarkOn(b, "", op)
		return
	}
	for _, dev := range rails {
		b.Run("rail="+dev, func(b *testing.B) { benchmarkOn(b, dev, op) })
	}
}

// benchmarkOn measures op on device dev ("": the configured one) at
// every size.
func benchmarkOn(b *testing.B, dev string, op spec.Op) {
	c := testenv.MustLoad(b)
	sizes, _, err := c.SizesFor(op, 0)
	if err != nil {
		b.Fatal(err)
	}
	pair, c := testenv.MustPairOn(b, dev, op, slices.Max(sizes))
	sizes, notes, err := c.SizesFor(op, pair.Local.Device().MTU)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range notes {
		b.Log(n) // b.Log, not stdout: see samplesFile
	}
	if err := testenv.PrintConfig(os.Stdout, pair, c); err != nil {
		b.Fatal(err)
	}
	art := newBenchArtifacts(b, pair, c)
	for _, size := range sizes {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			rec := rdmalat.Measure(b, pair, size, c.Warmup, art.samples(b, c))
			art.record(b, size, rec)
		})
	}
}

// samplesFile opens the raw-sample file of this run of b when
// RDMABENCH_SAMPLES_DIR is set: one file per sub-benchmark and repetition.
func samplesFile(b *testing.B, c env.Config) io.Writer {
	if c.SamplesDir == "" {
		return nil
	}
	base := strings.NewReplacer("/", "_", "=", "-").Replace(b.Name())
	f, err := os.CreateTemp(c.SamplesDir, base+".*.txt") // the directory was checked by MustPair
	if err != nil {
		b.Fatalf("%s=%s: %v", env.VarSamplesDir, c.SamplesDir, err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}
