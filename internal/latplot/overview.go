package latplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
)

// SizePoint is one operation at one message size: the typical latency
// and the spread around it, in microseconds.
type SizePoint struct {
	Size          int // bytes
	Min, P50, P99 float64
}

// SizeSeries is one operation across message sizes.
type SizeSeries struct {
	Label  string
	Points []SizePoint // ascending sizes
	Color  int
}

// BySize draws latency against message size, both on log axes: for each
// operation a line through its p50 and a whisker from its minimum to its
// p99 at every size. Series are nudged apart along x so that whiskers at
// one size do not hide each other.
func BySize(title string, series ...SizeSeries) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("latplot: no series to draw")
	}
	p := logLog(title, "message size", "latency: p50, whisker min to p99")
	p.X.Tick.Marker = sizeTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	for i, s := range series {
		if len(s.Points) == 0 {
			return nil, fmt.Errorf("latplot: %s has no points", s.Label)
		}
		nudge := math.Pow(2, 0.08*(float64(i)-float64(len(series)-1)/2))
		xy := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			if pt.Size <= 0 || pt.Min <= 0 || pt.P50 < pt.Min || pt.P99 < pt.P50 {
				return nil, fmt.Errorf("latplot: %s at %d bytes: want a size above 0 and 0 < min <= p50 <= p99, have %g, %g, %g", s.Label, pt.Size, pt.Min, pt.P50, pt.P99)
			}
			xy[j] = plotter.XY{X: float64(pt.Size) * nudge, Y: pt.P50}
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("latplot: %s: %w", s.Label, err)
		}
		c := plotutil.Color(s.Color)
		line.Color, line.Width = c, vg.Points(1.5)
		points.Color, points.Shape = c, draw.CircleGlyph{}
		bars := &plotter.YErrorBars{XYs: xy, YErrors: make(plotter.YErrors, len(xy)), LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1)}, CapWidth: vg.Points(5)}
		for j, pt := range s.Points {
			bars.YErrors[j].Low, bars.YErrors[j].High = pt.P50-pt.Min, pt.P99-pt.P50
		}
		p.Add(line, points, bars)
		p.Legend.Add(s.Label, line, points)
	}
	return p, nil
}

// sizeTicks label a log axis of bytes at each power of two, naming every
// other one when there are many.
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	first, last := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	every := 1.0
	if last-first > 12 {
		every = 2
	}
	for e := first; e <= last; e++ {
		v := math.Pow(2, e)
		if v < lo*0.999 || v > hi*1.001 {
			continue
		}
		t := plot.Tick{Value: v}
		if math.Mod(e, every) == 0 {
			t.Label = FormatBytes(int(v))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// FormatBytes writes a message size as perftest users read it: "2 B",
// "4 KiB", "1 MiB".
func FormatBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// SaveGrid draws plots in a grid, row by row (a nil plot or a short row
// leaves cells blank), each cell Width x Height, into one PNG or SVG file at path.
func SaveGrid(path string, plots [][]*plot.Plot) error {
	rows, cols := len(plots), 0
	for _, r := range plots {
		cols = max(cols, len(r))
	}
	if rows == 0 || cols == 0 {
		return errors.New("latplot: no plots to draw")
	}
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range grid[i] {
			if j < len(plots[i]) && plots[i][j] != nil {
				grid[i][j] = plots[i][j]
			} else {
				grid[i][j] = plot.New()
				grid[i][j].HideAxes()
			}
		}
	}
	plots = grid
	w, h := Width*vg.Length(cols), Height*vg.Length(rows)
	var c vg.CanvasWriterTo
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseBackgroundColor(color.White))}
	case ".svg":
		return fmt.Errorf("latplot: %s: a grid saves as PNG only; want a .png file name", path)
	default:
		return fmt.Errorf("latplot: %s: want a .png file name", path)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			p.Draw(canvases[i][j])
		}
	}
	err := atomicfile.Write(path, 0o644, func(f io.Writer) error {
		_, err := c.WriteTo(f)
		return err
	})
	if err != nil {
		return fmt.Errorf("latplot: writing %s: %w", path, err)
	}
	return nil
}
