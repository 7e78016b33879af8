package rdmalat

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/rdmabench/rdmabench/internal/work"
	"github.com/rdmabench/rdmabench/latency"
)

// Measure is the body of a latency benchmark: it starts a Run of size
// bytes on p (warm-up first, excluded), records one sample per b.Loop
// iteration, and reports the latency metrics (see Report) after the loop:
// one-way (RTT/2) for the ping-pong operations, whole for READ and
// atomics, as perftest reports them (Op.Halved). With raw non-nil
// every sample is also written to it, in order. It returns the run's
// Recorder, for the caller's artifacts. It allocates nothing per
// iteration. Call it inside a sub-benchmark, with the
// pair built once in the parent:
//
//	pair, _ := testenv.MustPair(b, rdmalat.OpWrite, 4096)
//	b.Run("size=64", func(b *testing.B) { rdmalat.Measure(b, pair, 64, 1000, nil) })
func Measure(b B, p *Pair, size, warmup int, raw io.Writer) *latency.Recorder {
	b.Helper()
	if err := CheckCPUFlag(); err != nil {
		b.Fatal(err)
	}
	rec := latency.NewRecorder(p.Local.Op().Halved())
	var rw *latency.RawWriter
	if raw != nil {
		rw = latency.NewRawWriter(raw)
		rec.SetRaw(rw)
	}
	work.Prepare() // before the run starts: its peer waits with a deadline
	run, err := p.Start(size, warmup)
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	run.setLabel(b.Name())
	if n := fixedIterations(); n > 0 {
		run.Expect(n)
	}
	ctr := startCounters(b, p)
	lm := startLoadMeter(b, p)

	b.ReportAllocs()
	wm := startWork(run)
	for b.Loop() {
		rtt, err := run.Next()
		if err != nil {
			b.Fatal(err)
		}
		rec.Record(rtt)
	}
	ctr.report(b, rec.Count())
	lm.report(b)
	if err := run.Close(); err != nil {
		b.Fatal(err)
	}
	if rw != nil {
		if err := rw.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	s := rec.Summary()
	latency.Report(b, s)
	reportWork(b, wm, run)
	logWarnings(b, s.Warnings)

	checkLimits(b, s, p.Limits)
	return rec
}

// fixedIterations returns N when the test binary runs its benchmarks
// with -test.benchtime=Nx, and 0 otherwise (a duration, or not under go
// test). With a fixed count, testing's b.Loop runs exactly N iterations
// in one call of the benchmark function, so Measure can tell its Run.
func fixedIterations() int {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return 0
	}
	s, ok := strings.CutSuffix(f.Value.String(), "x")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// B is the part of *testing.B that Measure uses. It is an interface so
// that this package does not import testing: rdmapeer links rdmalat, and
// a server has no business carrying the test framework.
type B interface {
	Helper()
	Fatal(args ...any)
	Loop() bool
	ReportAllocs()
	ReportMetric(n float64, unit string)
	Name() string
	Logf(format string, args ...any)
}

// warned holds the benchmarks whose summary warnings were logged: a
// benchmark function runs once per -count repetition, and the same
// warning ten times over hides the results.
var warned sync.Map

// logWarnings logs a benchmark's summary warnings (a percentile left out
// for too few samples, samples over the histogram's range) through b.Log,
// the first time that benchmark has any. b.Log, never stdout: what a leaf
// benchmark prints there lands on its result line.
func logWarnings(b logger, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	if _, seen := warned.LoadOrStore(b.Name(), true); seen {
		return
	}
	b.Logf("%s (shown once per benchmark; more samples with -benchtime, e.g. -benchtime=100000x)", strings.Join(warnings, "; "))
}

// logger is the part of *testing.B that logWarnings needs.
type logger interface {
	Name() string
	Logf(format string, args ...any)
}

// CheckCPUFlag refuses go test's -cpu with more than one value. Every Run
// measures at GOMAXPROCS 1 (see quietScheduler), so -cpu 1,4 would run the
// same measurement twice under two names (BenchmarkX and BenchmarkX-4).
func CheckCPUFlag() error {
	f := flag.Lookup("test.cpu")
	if f == nil {
		return nil
	}
	var n int
	for v := range strings.SplitSeq(f.Value.String(), ",") {
		if strings.TrimSpace(v) != "" {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("-cpu %s: the RDMA benchmarks measure at GOMAXPROCS 1 whatever -cpu says, so each value would repeat the same run under another name; drop -cpu (or give -cpu 1 for names without the -N suffix) and use -count for repetitions", f.Value.String())
	}
	return nil
}
