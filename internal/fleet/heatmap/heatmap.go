// Package heatmap draws a fleet's latency matrix as a heat map (PNG, SVG
// or any format gonum.org/v1/plot saves), one cell per pair, labelled
// with its value: rows are the nodes that ran the benchmark, columns the
// nodes that answered, the first node at the top left.
//
// Its cost is the N×N cells and no more: up to LabelledNodes nodes each
// cell is a rectangle with its value written in it; beyond, where a label
// would not fit its cell, the cells are one image of N×N pixels (a
// rectangle and a text per cell would make a 1000-node SVG of 10^6
// elements), and the axes name every k-th node only.
package heatmap

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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
	colors := pal.Palette(255)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s\n%.3g to %.3g %s (blue fastest, red slowest)", title, lo, hi, unit)
	p.X.Label.Text = "dst (rdmapeer)"
	p.Y.Label.Text = "src (benchmark)"
	p.X.Min, p.X.Max = -0.5, float64(len(nodes))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(nodes))-0.5
	xt, yt := ticks(nodes)
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	if len(nodes) > LabelledNodes {
		p.Add(plotter.NewImage(raster(values, lo, hi, colors.Colors()), p.X.Min, p.Y.Min, p.X.Max, p.Y.Max))
		return p, nil
	}
	hm := plotter.NewHeatMap(g, colors)
	hm.NaN = nanColor
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
	return p, nil
}

// LabelledNodes is the most nodes whose cells carry their values: at
// Size's largest side, a cell of more nodes is too small for a label.
const LabelledNodes = 60

// maxTicks is the most node names on an axis.
const maxTicks = LabelledNodes

// nanColor is the cell of a pair not measured, or failed.
var nanColor = color.Gray{Y: 235}

// ticks names the nodes on the axes: each one up to maxTicks nodes, every
// k-th beyond.
func ticks(nodes []string) (xt, yt []plot.Tick) {
	step := (len(nodes) + maxTicks - 1) / maxTicks
	for i := 0; i < len(nodes); i += step {
		xt = append(xt, plot.Tick{Value: float64(i), Label: nodes[i]})
		yt = append(yt, plot.Tick{Value: float64(len(nodes) - 1 - i), Label: nodes[i]})
	}
	return xt, yt
}

// rasterSide is about the side of the cells' area in pixels at Size's
// largest side and 96 dpi: raster draws each cell as a square of whole
// pixels near it, so that scaling it to the plot blurs only the edges.
const rasterSide = 2600

// raster returns the cells as an image, a square of k×k pixels per pair,
// row i from the top, each the colour NewHeatMap gives its value.
func raster(values [][]float64, lo, hi float64, colors []color.Color) image.Image {
	n := len(values)
	k := max(1, rasterSide/n)
	pal := append(color.Palette{nanColor}, colors...)
	img := image.NewPaletted(image.Rect(0, 0, n*k, n*k), pal)
	for i, row := range values {
		line := img.Pix[i*k*img.Stride : i*k*img.Stride+n*k]
		for j, v := range row {
			idx := 0
			if !math.IsNaN(v) {
				k := len(colors) - 1
				if hi > lo {
					k = int((v - lo) * float64(len(colors)-1) / (hi - lo))
				}
				idx = 1 + min(max(k, 0), len(colors)-1)
			}
			for x := range k {
				line[j*k+x] = uint8(idx)
			}
		}
		for y := 1; y < k; y++ {
			copy(img.Pix[(i*k+y)*img.Stride:], line)
		}
	}
	return img
}

// Save writes p as a square of side in format ("png", "svg", or any
// format gonum.org/v1/plot knows). A PNG is compressed for speed: the map
// of a large fleet is millions of pixels.
func Save(w io.Writer, p *plot.Plot, side vg.Length, format string) error {
	if format != "png" {
		wt, err := p.WriterTo(side, side, format)
		if err != nil {
			return err
		}
		_, err = wt.WriteTo(w)
		return err
	}
	c := vgimg.New(side, side)
	p.Draw(draw.New(c))
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return enc.Encode(w, c.Image())
}

// Size returns a side length that leaves room for every label.
func Size(nodes int) vg.Length {
	return vg.Length(max(4, min(30, 1+nodes/2))) * vg.Inch
}
