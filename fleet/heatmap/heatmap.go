// Package heatmap draws a fleet's latency matrix as a heat map (PNG, SVG
// or any format gonum.org/v1/plot saves), one cell per pair, labelled
// with its value: rows are the nodes that ran the benchmark, columns the
// nodes that answered, the first node at the top left.
package heatmap

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// grid adapts a square matrix, rows top down, to plotter.GridXYZ, whose
// rows count upwards.
type grid [][]float64

func (g grid) Dims() (c, r int)   { return len(g), len(g) }
func (g grid) Z(c, r int) float64 { return g[len(g)-1-r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) minMax() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, row := range g {
		for _, v := range row {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	return lo, hi
}

// New returns the heat map of values (values[i][j]: from nodes[i] to
// nodes[j], NaN where the pair was not measured or failed), in the unit
// named by unit (for example "us").
func New(title, unit string, nodes []string, values [][]float64) (*plot.Plot, error) {
	if len(nodes) == 0 || len(values) != len(nodes) {
		return nil, fmt.Errorf("heatmap: %d nodes, %d rows of values", len(nodes), len(values))
	}
	for i, row := range values {
		if len(row) != len(nodes) {
			return nil, fmt.Errorf("heatmap: row %d has %d values, want %d", i, len(row), len(nodes))
		}
	}
	g := grid(values)
	lo, hi := g.minMax()
	if math.IsInf(lo, 0) {
		return nil, fmt.Errorf("heatmap: no pair has a value")
	}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(lo)
	pal.SetMax(hi)
	if lo == hi { // one value: the palette needs a range
		pal.SetMax(hi + 1)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s\n%.3g to %.3g %s (blue fastest, red slowest)", title, lo, hi, unit)
	p.X.Label.Text = "dst (rdmapeer)"
	p.Y.Label.Text = "src (benchmark)"
	hm := plotter.NewHeatMap(g, pal.Palette(255))
	hm.NaN = color.Gray{Y: 235}
	p.Add(hm)

	var xys plotter.XYs
	var labels []string
	for i, row := range values {
		for j, v := range row {
			if math.IsNaN(v) {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(j), Y: float64(len(values) - 1 - i)})
			labels = append(labels, fmt.Sprintf("%.3g", v))
		}
	}
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, fmt.Errorf("heatmap: %w", err)
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign, lab.TextStyle[i].YAlign = -0.5, -0.5
	}
	p.Add(lab)

	xt := make([]plot.Tick, len(nodes))
	yt := make([]plot.Tick, len(nodes))
	for i, n := range nodes {
		xt[i] = plot.Tick{Value: float64(i), Label: n}
		yt[i] = plot.Tick{Value: float64(len(nodes) - 1 - i), Label: n}
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.X.Min, p.X.Max = -0.5, float64(len(nodes))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(nodes))-0.5
	return p, nil
}

// Size returns a side length that leaves room for every label.
func Size(nodes int) vg.Length {
	return vg.Length(max(4, min(30, 1+nodes/2))) * vg.Inch
}
