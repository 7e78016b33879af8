package report

import (
	"fmt"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"

	"github.com/rdmabench/rdmabench/internal/latplot"
	"github.com/rdmabench/rdmabench/internal/summary"
)

// OverviewFile is the overview picture's name in the results directory.
const OverviewFile = "overview.png"

// overviewCols is how many panels the picture has in a row.
const overviewCols = 3

// Overview draws the run's picture to path (a .png): first latency
// against message size for every operation, from the summary's medians
// of the runs' min, p50 and p99, then for each message size the tail
// curves of every operation at that size, from all its runs' samples
// merged (merged, by run name).
func Overview(path string, t *summary.Table, merged map[string]*hdrhistogram.Histogram) error {
	series, err := sizeSeries(t)
	if err != nil {
		return err
	}
	by, err := latplot.BySize("latency against message size (median of the runs)", series...)
	if err != nil {
		return err
	}
	panels := []*plot.Plot{by}
	sizes := map[int][]latplot.Series{}
	for _, r := range t.Rows {
		h := merged["Benchmark"+r.Name]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		sizes[r.Size] = append(sizes[r.Size], latplot.Series{Label: label(r, t), Hist: h, Color: colorOf(series, r, t)})
	}
	var keys []int
	for size := range sizes {
		keys = append(keys, size)
	}
	slices.Sort(keys)
	for _, size := range keys {
		p, err := latplot.Tail(fmt.Sprintf("tail at %s (every run's samples)", latplot.FormatBytes(size)), sizes[size]...)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	var grid [][]*plot.Plot
	for i := 0; i < len(panels); i += overviewCols {
		grid = append(grid, panels[i:min(i+overviewCols, len(panels))])
	}
	return latplot.SaveGrid(path, grid)
}

// label names a row's operation, with the config values that vary in the
// file when the operation has more than one.
func label(r summary.Row, t *summary.Table) string {
	var vs []string
	for _, k := range t.Varying {
		if variants(t, r.Base, k) > 1 {
			vs = append(vs, k+"="+r.Config[k])
		}
	}
	if len(vs) == 0 {
		return r.Base
	}
	return r.Base + " " + strings.Join(vs, " ")
}

func variants(t *summary.Table, base, key string) int {
	seen := map[string]bool{}
	for _, r := range t.Rows {
		if r.Base == base {
			seen[r.Config[key]] = true
		}
	}
	return len(seen)
}

// sizeSeries gives each operation (and variant) a series of its sizes.
func sizeSeries(t *summary.Table) ([]latplot.SizeSeries, error) {
	var series []latplot.SizeSeries
	index := map[string]int{}
	for _, r := range t.Rows {
		lo, okLo := r.Cells["min-sec"]
		mid, okMid := r.Cells["p50-sec"]
		hi, okHi := r.Cells["p99-sec"]
		if r.Size == 0 || !okLo || !okMid || !okHi {
			continue
		}
		l := label(r, t)
		i, ok := index[l]
		if !ok {
			i = len(series)
			index[l] = i
			series = append(series, latplot.SizeSeries{Label: l, Color: i})
		}
		series[i].Points = append(series[i].Points, latplot.SizePoint{Size: r.Size, Min: lo.Center * 1e6, P50: mid.Center * 1e6, P99: hi.Center * 1e6})
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("report: no row has min, p50 and p99 at a message size to draw")
	}
	return series, nil
}

// colorOf is the colour of r's series, so one operation has one colour in
// every panel.
func colorOf(series []latplot.SizeSeries, r summary.Row, t *summary.Table) int {
	l := label(r, t)
	for _, s := range series {
		if s.Label == l {
			return s.Color
		}
	}
	return len(series)
}
