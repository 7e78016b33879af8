package artifacts

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"

	"github.com/rdmabench/rdmabench/latplot"
)

// Base names of the files Write leaves in a run's directory.
const (
	LatencyBase   = "latency"   // latency.hlog, latency.hgrm, latency.samples.txt
	HistogramBase = "histogram" // histogram.png, histogram.svg
	TailBase      = "tail"      // tail.png, tail.svg
)

// Run is one run of one benchmark (one size, one -count repetition).
type Run struct {
	Name    string                  // "BenchmarkRDMAWrite/size=2"
	Size    int                     // message size in bytes
	Hist    *hdrhistogram.Histogram // the reported latency, ns
	Samples []int64                 // optional: every sample in order, ns
	// NoPlots leaves the plots out, for WritePlots to draw later from
	// the HDR log: drawing costs far more than measuring in an emulated
	// VM, and the host draws them faster.
	NoPlots bool
}

// Write leaves r's artifacts in dir (testing.B.ArtifactDir, after the
// measured loop): latency.hlog and latency.hgrm, latency.samples.txt when
// r has samples, and, unless r.NoPlots, histogram and tail plots as PNG
// and SVG. It returns r's Result, with the files' names, for the
// benchmark's Summary. With samples, Min, Max, Mean, StdDev and Stalls
// are exact.
func Write(dir string, r Run) (Result, error) {
	res := ResultOf(r.Name, r.Size, r.Hist)
	var files []string
	keep := func(path string, err error) error {
		if err == nil {
			files = append(files, filepath.Base(path))
		}
		return err
	}
	if len(r.Samples) > 0 {
		exact(&res, r.Samples)
		if err := keep(WriteSamples(dir, LatencyBase, r.Samples)); err != nil {
			return res, err
		}
	}
	if err := keep(WriteHlog(dir, LatencyBase, r.Name, r.Hist)); err != nil {
		return res, err
	}
	if err := keep(WriteHgrm(dir, LatencyBase, r.Hist)); err != nil {
		return res, err
	}
	if !r.NoPlots {
		plots, err := WritePlots(dir, r.Name, r.Hist)
		files = append(files, plots...)
		if err != nil {
			return res, err
		}
	}
	res.Files = files
	return res, nil
}

// WritePlots draws the histogram and tail plots of one run (name, its
// histogram h in ns) into dir as PNG and SVG and returns the files'
// names; none for an empty histogram.
func WritePlots(dir, name string, h *hdrhistogram.Histogram) ([]string, error) {
	if h.TotalCount() == 0 {
		return nil, nil
	}
	title := fmt.Sprintf("%s: %d samples, p50 %.3g us", name, h.TotalCount(), float64(h.ValueAtQuantile(50))/1000)
	hp, err := latplot.Histogram(title, h, 0)
	if err != nil {
		return nil, err
	}
	tp, err := latplot.Tail(title, latplot.Series{Label: shortName(name), Hist: h})
	if err != nil {
		return nil, err
	}
	var files []string
	for _, pl := range []struct {
		base string
		p    *plot.Plot
	}{{HistogramBase, hp}, {TailBase, tp}} {
		paths, err := latplot.SaveBoth(pl.p, dir, pl.base)
		for _, path := range paths {
			files = append(files, filepath.Base(path))
		}
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// exact replaces the histogram's approximations with the samples' exact
// figures.
func exact(res *Result, samples []int64) {
	lo, hi := samples[0], samples[0]
	var mean, m2 float64
	for i, s := range samples {
		lo, hi = min(lo, s), max(hi, s)
		d := float64(s) - mean
		mean += d / float64(i+1)
		m2 += d * (float64(s) - mean)
	}
	res.Min, res.Max, res.Mean = float64(lo), float64(hi), mean
	res.StdDev = 0
	if len(samples) > 1 {
		res.StdDev = math.Sqrt(m2 / float64(len(samples)-1))
	}
	res.Stalls = StallsOf(samples)
}

// shortName is the part of a benchmark name after its last "/", the size
// in "BenchmarkRDMAWrite/size=2".
func shortName(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}
