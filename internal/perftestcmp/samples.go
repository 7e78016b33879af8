package perftestcmp

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rdmabench/rdmabench/latency"
)

// Both sides' statistics come from their raw samples through one
// definition, latency.Recorder's, so that a ratio compares measurements and
// not two ways of summarizing them: perftest's -U dump (parsed by
// internal/perftest) and the benchmark's RDMABENCH_SAMPLES_DIR file are
// turned back into round trips in nanoseconds, the first warmup of each
// are dropped, and the rest recorded. perftest's own printed table is
// kept beside for reference (its rules differ: it drops the 2 largest
// samples and takes percentiles by index).

// rttsFromPerftest converts perftest's -U samples (microseconds, one-way
// where the tool halves) to round trips in nanoseconds.
func rttsFromPerftest(us []float64, halved bool) []int64 {
	f := 1e3
	if halved {
		f = 2e3
	}
	out := make([]int64, len(us))
	for i, v := range us {
		out[i] = int64(math.Round(v * f))
	}
	return out
}

// readOurSamples reads the one samples file the benchmark wrote into dir
// (latency.RawWriter's format: nanoseconds with one decimal, one-way where
// the operation halves) and returns round trips in nanoseconds.
func readOurSamples(dir string, halved bool) ([]int64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("RDMABENCH_SAMPLES_DIR %s holds %d sample files, want 1 (one benchmark, -test.count=1)", dir, len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	f := 1.0
	if halved {
		f = 2
	}
	var out []int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		v, err := strconv.ParseFloat(sc.Text(), 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s line %d: %q is not a sample in nanoseconds", files[0], n, sc.Text())
		}
		out = append(out, int64(math.Round(v*f)))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no samples", files[0])
	}
	return out, nil
}

// figuresOf drops the first warmup round trips and summarizes the rest
// with latency.Recorder, in microseconds (one-way where halved), with its
// stall count and, where the run is long enough, its shift (steady.go).
// A percentile the recorder leaves out for too few samples is absent.
func figuresOf(rtts []int64, warmup int, halved bool) (Figures, error) {
	if warmup >= len(rtts) {
		return nil, fmt.Errorf("%d samples, all of them within -warmup %d", len(rtts), warmup)
	}
	rec := latency.NewRecorder(halved)
	for _, v := range rtts[warmup:] {
		rec.Record(v)
	}
	s := rec.Summary()
	f := Figures{"min": s.Min / 1e3, "mean": s.Mean / 1e3, "max": s.Max / 1e3, "stalls": float64(s.Stalls)}
	if v := shiftOf(rtts[warmup:]); !math.IsNaN(v) {
		f["shift"] = v
	}
	for _, q := range s.Percentiles {
		if q.OK {
			f[q.P.Name()] = q.Value / 1e3
		}
	}
	return f, nil
}
