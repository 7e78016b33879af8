package latency

// Metric units, as testing.B.ReportMetric reports them. benchstat tidies a
// unit whose part before the first '/' holds the token "ns" into seconds
// ("p99-ns" shows as "p99-sec"), so these compare as times. Every one of
// them, ns/op included, is the same quantity: one-way latency per sample
// (half a round trip), so a column of ours lines up with perftest's
// t_min, t_typical, 99%, 99.9% and t_max:
//
//	ns/op      mean              (perftest t_avg)
//	min-ns     minimum           (t_min)
//	p50-ns     median            (t_typical)
//	p90-ns     90th percentile
//	p99-ns     99th percentile   (99% percentile)
//	p99.9-ns   99.9th percentile (99.9% percentile)
//	p99.99-ns  99.99th percentile
//	max-ns     maximum           (t_max is perftest's second largest)
//	stddev-ns  standard deviation (t_stdev)
//	stalls     samples slower than 10x the median, counted (no perftest column)
//
// A percentile with too few samples behind it is not reported at all (see
// Summary); benchstat then shows it only for the runs that had it.
const (
	UnitMean   = "ns/op"
	UnitMin    = "min-ns"
	UnitMax    = "max-ns"
	UnitStdDev = "stddev-ns"
	// UnitStalls counts the run's stalls: samples slower than StallFactor
	// times its median (see Summary.Stalls). A count per run, so compare
	// runs of one length (-benchtime=Nx).
	UnitStalls = "stalls"
)

// Unit returns the metric unit of percentile p, "p99.9-ns" for 999000.
func (p PPM) Unit() string { return p.Name() + "-ns" }

// MetricReporter is the part of *testing.B that Report needs.
type MetricReporter interface {
	ReportMetric(n float64, unit string)
}

// Report reports s as benchmark metrics: the mean as ns/op (replacing the
// benchmark's own wall-clock ns/op), then min, the percentiles that have
// enough samples, max and the standard deviation. Call it after the b.Loop
// loop.
func Report(b MetricReporter, s Summary) {
	if s.Count == 0 {
		return
	}
	b.ReportMetric(s.Mean, UnitMean)
	b.ReportMetric(s.Min, UnitMin)
	for _, q := range s.Percentiles {
		if q.OK {
			b.ReportMetric(q.Value, q.P.Unit())
		}
	}
	b.ReportMetric(s.Max, UnitMax)
	b.ReportMetric(s.StdDev, UnitStdDev)
	b.ReportMetric(float64(s.Stalls), UnitStalls)
}
