package latplot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runHist is a run of n samples from 10 us to 11 us, 3 of them 150 us.
func runHist(n int) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 100e9, 3)
	for i := range n {
		v := 10000 + int64(i*37%1000)
		if i%(n/3) == 1 {
			v = 150000
		}
		h.RecordValue(v)
	}
	return h
}

func TestWritePlots(t *testing.T) {
	dir := t.TempDir()
	files, err := WritePlots(dir, "BenchmarkRDMAWrite/size=2", runHist(5000))
	require.NoError(t, err)
	assert.Equal(t, []string{"histogram.png", "histogram.svg", "tail.png", "tail.svg"}, files)
	// The PNG decodes at the documented size; the SVG is XML with an svg
	// root, and its histogram's log axis reaches the slowest sample, which
	// its label names.
	f, err := os.Open(filepath.Join(dir, "tail.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 7*96, img.Bounds().Dx())
	svg, err := os.ReadFile(filepath.Join(dir, "histogram.svg"))
	require.NoError(t, err)
	assert.Equal(t, "svg", xmlRoot(t, svg))
	label := "5000 samples, from 10us"
	assert.True(t, strings.Contains(string(svg), label), "histogram.svg lacks %q", label)
	tail, err := os.ReadFile(filepath.Join(dir, "tail.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(tail), ">size=2<", "the tail's series is named by the size")

	files, err = WritePlots(dir, "empty", hdrhistogram.New(1, 100e9, 3))
	assert.NoError(t, err)
	assert.Empty(t, files, "nothing to draw")
}

func xmlRoot(t *testing.T, b []byte) string {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local
		}
	}
}

// BenchmarkWritePlots measures drawing a run's plots: 20000 samples, both
// plots in both formats.
func BenchmarkWritePlots(b *testing.B) {
	h := runHist(20000)
	dir := b.TempDir()
	for b.Loop() {
		if _, err := WritePlots(dir, "BenchmarkX/size=2", h); err != nil {
			b.Fatal(err)
		}
	}
}
