package latency

import (
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// StallFactor defines a stall: a sample slower than StallFactor times the
// run's median.
const StallFactor = 10

// CountStalls counts the samples of h above StallFactor times its median,
// at the histogram's resolution (3 significant digits).
func CountStalls(h *hdrhistogram.Histogram) int64 {
	if h.TotalCount() == 0 {
		return 0
	}
	limit := StallFactor * h.ValueAtQuantile(median.Float())
	var n int64
	for _, bar := range h.Distribution() {
		if bar.From > limit {
			n += bar.Count
		}
	}
	return n
}

// median is percentile 50, the one stalls are measured against.
const median PPM = 500000

// StallsOf counts the samples above StallFactor times their median
// (nearest rank), exactly, from the raw samples.
func StallsOf(samples []int64) int64 {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	limit := StallFactor * sorted[median.Rank(int64(len(sorted)))-1]
	var n int64
	for _, s := range samples {
		if s > limit {
			n++
		}
	}
	return n
}
