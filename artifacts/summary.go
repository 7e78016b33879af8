package artifacts

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rdmabench/rdmabench/latency"
)

// SummaryFile is the name of the JSON summary in a benchmark's directory.
const SummaryFile = "summary.json"

// StallFactor defines a stall: a sample slower than StallFactor times the
// run's median; the definition is latency's.
const StallFactor = latency.StallFactor

// Summary is one benchmark's results, every size in one file (perftest's
// JSON keeps only the last size).
type Summary struct {
	Benchmark string            `json:"benchmark"`        // "BenchmarkRDMAWrite"
	Config    map[string]string `json:"config,omitempty"` // its configuration lines
	Unit      string            `json:"unit"`             // "ns"
	OneWay    bool              `json:"one_way"`          // times are half round trips
	Results   []Result          `json:"results"`
}

// Result is one size (one sub-benchmark run).
type Result struct {
	Name   string  `json:"name"` // "BenchmarkRDMAWrite/size=2"
	Size   int     `json:"size"` // bytes
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
	// Percentiles by name ("p50", "p99.9"): nearest rank from the
	// histogram, present only when at least one sample is expected above
	// it (Count*(1-p) >= 1), the benchmarks' rule.
	Percentiles map[string]float64 `json:"percentiles"`
	Stalls      int64              `json:"stalls"` // samples above StallFactor x the median
	Files       []string           `json:"files,omitempty"`
	Dir         string             `json:"dir,omitempty"` // where Files are, when not beside the summary
}

// percentiles are the ones a Result reports, as fractions of a million.
var percentiles = []int64{500000, 900000, 990000, 999000, 999900}

func percentileName(ppm int64) string {
	return "p" + strconv.FormatFloat(float64(ppm)/1e4, 'f', -1, 64)
}

// ResultOf computes a Result from a histogram of the reported latency
// (ns). Min, Max, Mean and StdDev come from the histogram, within its
// precision; a caller that has the exact figures sets them afterwards.
func ResultOf(name string, size int, h *hdrhistogram.Histogram) Result {
	r := Result{Name: name, Size: size, Count: h.TotalCount(), Percentiles: map[string]float64{}}
	if r.Count == 0 {
		return r
	}
	r.Min, r.Max, r.Mean, r.StdDev = float64(h.Min()), float64(h.Max()), h.Mean(), h.StdDev()
	for _, p := range percentiles {
		if r.Count*(1e6-p) >= 1e6 {
			r.Percentiles[percentileName(p)] = float64(min(h.ValueAtQuantile(float64(p)/1e4), h.Max()))
		}
	}
	r.Stalls = Stalls(h)
	return r
}

// Stalls counts the samples of h above StallFactor times its median.
func Stalls(h *hdrhistogram.Histogram) int64 { return latency.CountStalls(h) }

// StallsOf counts the samples above StallFactor times their median,
// exactly, from the raw samples.
func StallsOf(samples []int64) int64 {
	if len(samples) == 0 {
		return 0
	}
	sorted := append([]int64(nil), samples...)
	slices.Sort(sorted)
	k := int(math.Floor(0.5*float64(len(sorted)) + 0.5)) // nearest rank
	median := sorted[max(k, 1)-1]
	var n int64
	for _, s := range samples {
		if s > StallFactor*median {
			n++
		}
	}
	return n
}

// WriteSummary writes s as indented JSON to dir/summary.json.
func WriteSummary(dir string, s Summary) (string, error) {
	if s.Unit == "" {
		s.Unit = "ns"
	}
	return writeFile(filepath.Join(dir, SummaryFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	})
}

// ReadSummary reads a summary written by WriteSummary.
func ReadSummary(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
