package latency

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Definitions. Every figure a Summary holds is a one-way latency in
// nanoseconds: half of a measured round trip, the way perftest's
// ib_write_lat and ib_send_lat report. (ib_read_lat and ib_atomic_lat report
// the whole round trip; an engine for those operations records with
// Halve=false and says so in its metric names.)
//
//   - Count: the number of samples recorded; warm-up is never recorded.
//   - Min, Max: the smallest and largest sample, exact.
//   - Mean: the arithmetic mean of all samples, exact (float64 sums).
//   - StdDev: the sample standard deviation (n-1 denominator), computed in
//     float64 with Welford's method from the exact samples. perftest's
//     t_stdev squares integer-truncated microseconds, so jitter under a
//     microsecond reads 0 there; here it does not.
//   - Percentile p: nearest rank. With the samples sorted ascending, the
//     sample at rank k = floor(p/100 * Count + 0.5), clamped to [1, Count].
//     It comes from an HDR histogram with 3 significant digits, so it is the
//     highest value equivalent to that sample: at most 0.1% above it, and
//     never above Max. A percentile is reported only when Count*(1-p/100)
//     >= 1, that is when at least one sample is expected above it; with
//     fewer samples it would only be the maximum under another name (at
//     perftest's default 1000 iterations its 99.9% is always its t_max), so
//     it is left out and a warning says how many samples it needs.
//
// The histogram covers 1 ns to 100 s of round-trip time in constant memory
// (about 230 KB), whatever the number of samples.

// Percentiles lists the percentiles every Summary computes, in parts per
// million so that the availability rule is exact integer arithmetic.
var Percentiles = []PPM{500000, 900000, 990000, 999000, 999900}

// PPM is a percentile in parts per million: 990000 is p99.
type PPM int64

// Float returns the percentile as a percentage, 99.9 for 999000.
func (p PPM) Float() float64 { return float64(p) / 1e4 }

// Name returns the percentile's short name, "p99.9" for 999000.
func (p PPM) Name() string {
	return "p" + trimFloat(p.Float())
}

// Rank returns the nearest rank of p among n samples sorted ascending,
// from 1: floor(p/100 * n + 0.5), clamped to [1, n]; 0 when n is 0.
func (p PPM) Rank(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return min(max((int64(p)*n+500000)/1000000, 1), n)
}

// MinCount returns the smallest sample count for which the percentile is
// reported: Count*(1e6-p) >= 1e6.
func (p PPM) MinCount() int64 {
	rest := int64(1e6) - int64(p)
	return (int64(1e6) + rest - 1) / rest
}

const (
	histLowest  = 1                // ns
	histHighest = 100 * 1000000000 // ns: 100 s
	histDigits  = 3
)

// Recorder accumulates latency samples in constant memory. Recording a
// sample allocates nothing. The zero value is not usable: call NewRecorder.
type Recorder struct {
	hist  *hdrhistogram.Histogram
	halve bool

	n        int64
	min, max int64
	mean, m2 float64 // Welford's running mean and sum of squared deviations
	overflow int64   // samples beyond the histogram's range (still in min/max/mean)

	raw *RawWriter
}

// NewRecorder returns a Recorder. With halve set, recorded round trips are
// reported as one-way latency (RTT/2).
func NewRecorder(halve bool) *Recorder {
	return &Recorder{
		hist:  hdrhistogram.New(histLowest, histHighest, histDigits),
		halve: halve,
		min:   math.MaxInt64,
	}
}

// SetRaw makes the Recorder also write every recorded sample, in order, to w
// (perftest -U). A nil w stops that.
func (r *Recorder) SetRaw(w *RawWriter) { r.raw = w }

// Record adds one measured round trip, in nanoseconds.
func (r *Recorder) Record(rttNS int64) {
	if rttNS < 0 {
		rttNS = 0
	}
	r.n++
	if rttNS < r.min {
		r.min = rttNS
	}
	if rttNS > r.max {
		r.max = rttNS
	}
	x := float64(rttNS)
	d := x - r.mean
	r.mean += d / float64(r.n)
	r.m2 += d * (x - r.mean)
	if r.hist.RecordValue(max(rttNS, histLowest)) != nil {
		r.overflow++
	}
	if r.raw != nil {
		r.raw.write(rttNS, r.halve)
	}
}

// Count returns the number of samples recorded.
func (r *Recorder) Count() int64 { return r.n }

// Reset forgets every sample.
func (r *Recorder) Reset() {
	r.hist.Reset()
	r.n, r.min, r.max, r.mean, r.m2, r.overflow = 0, math.MaxInt64, 0, 0, 0, 0
}

// Histogram returns the underlying histogram of round-trip times in ns (not
// halved), for export or plotting. It stays owned by the Recorder.
func (r *Recorder) Histogram() *hdrhistogram.Histogram { return r.hist }

// Quantile is one percentile of a Summary.
type Quantile struct {
	P     PPM
	Value float64 // ns; meaningful only when OK
	OK    bool    // false: too few samples to tell it apart from Max
}

// Summary is the statistics of a set of samples; see the definitions at the
// top of this file. Times are in nanoseconds.
type Summary struct {
	Count       int64
	OneWay      bool // times are half round trips
	Min, Max    float64
	Mean        float64
	StdDev      float64
	Percentiles []Quantile
	// Stalls counts the samples slower than StallFactor times the median:
	// a phenomenon apart from the median (a preemption, a timer tick, a
	// page fault), counted so that a run with 3 of them and one with 300
	// differ even when their p99 agree.
	Stalls int64
	// Warnings says what could not be computed and why (too few samples
	// for a percentile, samples beyond the histogram's range).
	Warnings []string
}

// Summary computes the statistics of what was recorded so far.
func (r *Recorder) Summary() Summary {
	s := Summary{Count: r.n, OneWay: r.halve}
	if r.n == 0 {
		for _, p := range Percentiles {
			s.Percentiles = append(s.Percentiles, Quantile{P: p})
		}
		s.Warnings = append(s.Warnings, "no samples")
		return s
	}
	scale := 1.0
	if r.halve {
		scale = 0.5
	}
	s.Min = float64(r.min) * scale
	s.Max = float64(r.max) * scale
	s.Mean = r.mean * scale
	if r.n > 1 {
		s.StdDev = math.Sqrt(r.m2/float64(r.n-1)) * scale
	}
	for _, p := range Percentiles {
		q := Quantile{P: p}
		if r.n >= p.MinCount() {
			v := min(r.hist.ValueAtQuantile(p.Float()), r.max)
			q.Value, q.OK = float64(v)*scale, true
		} else {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s needs at least %d samples, have %d", p.Name(), p.MinCount(), r.n))
		}
		s.Percentiles = append(s.Percentiles, q)
	}
	s.Stalls = CountStalls(r.hist) + r.overflow
	if r.overflow > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d samples above %v left out of the percentiles", r.overflow, histHighest))
	}
	return s
}

// Percentile returns the value of percentile p and whether it is known.
func (s Summary) Percentile(p PPM) (float64, bool) {
	for _, q := range s.Percentiles {
		if q.P == p {
			return q.Value, q.OK
		}
	}
	return 0, false
}

func trimFloat(f float64) string {
	return fmt.Sprintf("%g", f)
}
