package artifacts

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rdmabench/rdmabench/latency"
)

// SummaryFile is the name of the JSON summary in a benchmark's directory.
const SummaryFile = "summary.json"

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
	// Percentiles by name ("p50", "p99.9"): latency.Percentiles, nearest
	// rank from the histogram, each present only when Count reaches its
	// latency.PPM.MinCount, the benchmarks' rule.
	Percentiles map[string]float64 `json:"percentiles"`
	Stalls      int64              `json:"stalls"` // samples above latency.StallFactor x the median
	Files       []string           `json:"files,omitempty"`
	Dir         string             `json:"dir,omitempty"` // where Files are, when not beside the summary
}

// resultOf computes a Result from a histogram of the reported latency
// (ns). Min, Max, Mean and StdDev come from the histogram, within its
// precision; a caller that has the exact figures sets them afterwards.
func resultOf(name string, size int, h *hdrhistogram.Histogram) Result {
	r := Result{Name: name, Size: size, Count: h.TotalCount(), Percentiles: map[string]float64{}}
	if r.Count == 0 {
		return r
	}
	r.Min, r.Max, r.Mean, r.StdDev = float64(h.Min()), float64(h.Max()), h.Mean(), h.StdDev()
	for _, p := range latency.Percentiles {
		if r.Count >= p.MinCount() {
			r.Percentiles[p.Name()] = float64(min(h.ValueAtQuantile(p.Float()), h.Max()))
		}
	}
	r.Stalls = latency.CountStalls(h)
	return r
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
