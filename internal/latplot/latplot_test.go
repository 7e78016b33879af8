package latplot

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
)

func TestLogBins(t *testing.T) {
	h := hdrhistogram.New(1, 100e9, 3)
	// 10 us to 10 ms in 3 bins: each a decade wide.
	h.RecordValues(10_000, 900) // first bin [10, 100) us
	h.RecordValues(50_000, 90)  // first bin
	h.RecordValues(200_000, 9)  // second bin [100, 1000) us
	h.RecordValue(10_000_000)   // the maximum: last bin (its upper edge)
	bins := LogBins(h, 10_000, 10_000_000, 3)
	require.Len(t, bins, 3)
	assert.InDelta(t, 10.0, bins[0].Min, 1e-9)
	assert.InDelta(t, 100.0, bins[0].Max, 1e-9)
	assert.InDelta(t, 1000.0, bins[1].Max, 1e-6)
	assert.InDelta(t, 10000.0, bins[2].Max, 1e-6)
	assert.Equal(t, []float64{990, 9, 1}, []float64{bins[0].Weight, bins[1].Weight, bins[2].Weight})
}

func TestHistogramLogAxis(t *testing.T) {
	h := hdrhistogram.New(1, 100e9, 3)
	h.RecordValues(12_000, 1000)
	h.RecordValue(3_000_000)
	p, err := Histogram("t", h, 0)
	require.NoError(t, err)
	assert.IsType(t, plot.LogScale{}, p.X.Scale)
	assert.InDelta(t, 12.0, p.X.Min, 0.01, "the axis starts at the minimum")
	assert.InDelta(t, 3000.0, p.X.Max, 3, "and reaches the maximum, the stall included")
	_, err = Histogram("empty", hdrhistogram.New(1, 100e9, 3), 0)
	assert.Error(t, err)
}

func TestTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks125{}).Ticks(8, 300) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"10us", "20us", "50us", "100us", "200us"}, labels)
	labels = nil
	for _, tk := range (logTicks125{}).Ticks(0.5, 3e6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"1us", "10us", "100us", "1ms", "10ms", "100ms", "1s"}, labels)
	assert.Equal(t, "500ns", formatUS(0.5))
}
