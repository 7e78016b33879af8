// Package latplot draws latency distributions held in HDR histograms
// (values in nanoseconds) with gonum.org/v1/plot: a histogram of the bulk
// of the samples, and the percentile (tail) plot HdrHistogram made
// common, whose x axis stretches the tail on a log scale (50%, 90%, 99%,
// 99.9%, ... equally spaced), so a change in the slowest samples shows
// as clearly as one in the median. Plots save as PNG or SVG.
package latplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
)

// Size of a saved plot.
const (
	Width  = 7 * vg.Inch
	Height = 4.5 * vg.Inch
)

// Series is one latency distribution on a tail plot.
type Series struct {
	Label  string
	Hist   *hdrhistogram.Histogram
	Dashed bool // drawn dashed: "old" in a comparison
	Color  int  // index into plotutil's palette; series with one Color pair up
}

// TailPoints returns a tail curve: x = 1/(1-q) for each quantile q that
// the histogram's percentile iteration visits (5 ticks per halving of
// the distance to 100%), ending at the last sample (x = the count), and y
// the latency there in microseconds.
func TailPoints(h *hdrhistogram.Histogram) plotter.XYs {
	n := h.TotalCount()
	var xys plotter.XYs
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		q := b.Quantile / 100
		x := 1 / (1 - q)
		if q >= 1 || x > float64(n) {
			x = float64(n) // the maximum: rank n of n
		}
		xys = append(xys, plotter.XY{X: x, Y: float64(b.ValueAt) / 1000})
		if x == float64(n) {
			break
		}
	}
	return xys
}

// tailTicks label the x axis in percentiles.
func tailTicks(maxX float64) plot.ConstantTicks {
	ticks := plot.ConstantTicks{{Value: 1, Label: "0%"}, {Value: 2, Label: "50%"}}
	for i, label := range []string{"90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%"} {
		v := math.Pow(10, float64(i+1))
		if v > maxX*1.0001 && i > 0 {
			break
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// logTicks125 marks a log axis of microseconds at 1 to 9 times each power
// of ten and labels 1, 2 and 5 of them (only the powers of ten when the
// axis spans more than three decades), with units: latency ranges often
// span less than a decade, where plain powers of ten would leave the axis
// bare.
type logTicks125 struct{}

func (logTicks125) Ticks(lo, hi float64) []plot.Tick {
	wide := hi/lo > 1000
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < lo*0.999 || v > hi*1.001 {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (!wide && (m == 2 || m == 5)) {
				t.Label = formatUS(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// formatUS writes a duration given in microseconds with its unit: "500ns",
// "20us", "2ms", "1s".
func formatUS(us float64) string {
	f := func(v float64, unit string) string { return strconv.FormatFloat(v, 'g', 3, 64) + unit }
	switch {
	case us >= 1e6:
		return f(us/1e6, "s")
	case us >= 1e3:
		return f(us/1e3, "ms")
	case us >= 1:
		return f(us, "us")
	}
	return f(us*1e3, "ns")
}

// Tail draws the percentile plot of one or more distributions, latency
// (us, log scale) against percentile (log scale of 1/(1-q)).
func Tail(title string, series ...Series) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("latplot: no series to draw")
	}
	p := logLog(title, "percentile", "latency")
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	maxX := 2.0
	for _, s := range series {
		if s.Hist.TotalCount() == 0 {
			return nil, fmt.Errorf("latplot: %s has no samples", s.Label)
		}
		pts := TailPoints(s.Hist)
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("latplot: %s: %w", s.Label, err)
		}
		line.Color = plotutil.Color(s.Color)
		line.Width = vg.Points(1.5)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line)
		p.Legend.Add(s.Label, line)
		maxX = max(maxX, pts[len(pts)-1].X)
	}
	p.X.Min, p.X.Max = 1, maxX
	p.X.Tick.Marker = tailTicks(maxX)
	return p, nil
}

// Histogram draws the latency histogram of h on a log latency axis, from
// its minimum to its maximum, in bins equal in width on that axis (bins
// <= 0: 80), so that both the bulk and the tail show: on a linear axis a
// millisecond stall squeezes the microsecond bulk into one bar. Each
// bin's height is its count of samples.
func Histogram(title string, h *hdrhistogram.Histogram, bins int) (*plot.Plot, error) {
	n := h.TotalCount()
	if n == 0 {
		return nil, errors.New("latplot: no samples to draw")
	}
	if bins <= 0 {
		bins = 80
	}
	lo, hi := float64(max(h.Min(), 1)), float64(h.Max())
	hi = max(hi, lo*1.01) // one value: a narrow bar, not an empty axis
	hb := LogBins(h, lo, hi, bins)
	hist := &plotter.Histogram{Bins: hb, Width: 1, FillColor: color.RGBA{R: 70, G: 110, B: 180, A: 255}}
	hist.LineStyle.Width = vg.Points(0.5)
	hist.LineStyle.Color = color.RGBA{R: 40, G: 60, B: 110, A: 255}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = fmt.Sprintf("latency (log scale); %d samples, from %s to %s", n, formatUS(lo/1000), formatUS(hi/1000))
	p.Y.Label.Text = "samples"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks125{}
	p.X.Min, p.X.Max = hb[0].Min, hb[len(hb)-1].Max
	p.Add(hist)
	return p, nil
}

// LogBins counts h's samples (ns) in bins equally wide in log(latency)
// from lo to hi ns; bin bounds are in microseconds. Samples outside
// [lo, hi] go to the first or last bin. HdrHistogram buckets are placed
// by their lowest value.
func LogBins(h *hdrhistogram.Histogram, lo, hi float64, bins int) []plotter.HistogramBin {
	hb := make([]plotter.HistogramBin, bins)
	step := math.Log(hi/lo) / float64(bins)
	for i := range hb {
		hb[i].Min = lo * math.Exp(float64(i)*step) / 1000
		hb[i].Max = lo * math.Exp(float64(i+1)*step) / 1000
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		v := max(float64(bar.From), lo)
		i := int(math.Log(v/lo) / step)
		hb[min(max(i, 0), bins-1)].Weight += float64(bar.Count)
	}
	return hb
}

// Save writes p to path, as PNG or SVG by its extension.
func Save(p *plot.Plot, path string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg":
	default:
		return fmt.Errorf("latplot: %s: want a .png or .svg file name", path)
	}
	w, err := p.WriterTo(Width, Height, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err == nil {
		err = atomicfile.Write(path, 0o644, func(f io.Writer) error {
			_, err := w.WriteTo(f)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("latplot: %w", err)
	}
	return nil
}

// SaveBoth writes p to dir/name.png and dir/name.svg and returns the paths.
func SaveBoth(p *plot.Plot, dir, name string) ([]string, error) {
	var paths []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, name+ext)
		if err := Save(p, path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// logLog returns a plot with log scales on both axes and latency ticks of
// 1, 2, 5 times a power of ten on y.
func logLog(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = logTicks125{}
	return p
}
