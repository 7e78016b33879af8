package latplot

import (
	"fmt"
	"path/filepath"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
)

// Base names of the plots WritePlots leaves in a run's directory, beside
// its HDR log and samples (package artifacts).
const (
	HistogramBase = "histogram" // histogram.png, histogram.svg
	TailBase      = "tail"      // tail.png, tail.svg
)

// WritePlots draws the histogram and tail plots of one run (name, its
// histogram h in ns) into dir as PNG and SVG and returns the files'
// names; none for an empty histogram.
func WritePlots(dir, name string, h *hdrhistogram.Histogram) ([]string, error) {
	if h.TotalCount() == 0 {
		return nil, nil
	}
	title := fmt.Sprintf("%s: %d samples, p50 %.3g us", name, h.TotalCount(), float64(h.ValueAtQuantile(50))/1000)
	hp, err := Histogram(title, h, 0)
	if err != nil {
		return nil, err
	}
	tp, err := Tail(title, Series{Label: shortName(name), Hist: h})
	if err != nil {
		return nil, err
	}
	var files []string
	for _, pl := range []struct {
		base string
		p    *plot.Plot
	}{{HistogramBase, hp}, {TailBase, tp}} {
		paths, err := SaveBoth(pl.p, dir, pl.base)
		for _, path := range paths {
			files = append(files, filepath.Base(path))
		}
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// shortName is the part of a benchmark name after its last "/", the size
// in "BenchmarkRDMAWrite/size=2".
func shortName(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}
