package heatmap

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHeatmap(t *testing.T) {
	nan := math.NaN()
	nodes := []string{"n1", "n2", "n3", "n4"}
	values := [][]float64{
		{nan, 10, 11, 30},
		{nan, nan, 12, 31},
		{nan, nan, nan, 29},
		{nan, nan, nan, nan},
	}
	p, err := New("RDMAWrite/size=2 p50", "us", nodes, values)
	require.NoError(t, err)
	dir := t.TempDir()
	side := Size(len(nodes))
	for _, name := range []string{"heatmap.png", "heatmap.svg"} {
		require.NoError(t, p.Save(side, side, filepath.Join(dir, name)))
	}
	f, err := os.Open(filepath.Join(dir, "heatmap.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 4*96, img.Bounds().Dx(), "4 inches at 96 dpi")

	svg, err := os.ReadFile(filepath.Join(dir, "heatmap.svg"))
	require.NoError(t, err)
	s := string(svg)
	assert.True(t, strings.HasPrefix(s, "<?xml") || strings.Contains(s[:200], "<svg"))
	for _, want := range []string{">n1<", ">n4<", ">31<", ">10<", "10 to 31 us"} {
		assert.Contains(t, s, want)
	}

	_, err = New("x", "us", nodes, values[:2])
	assert.ErrorContains(t, err, "4 nodes, 2 rows")
	_, err = New("x", "us", []string{"a"}, [][]float64{{nan}})
	assert.ErrorContains(t, err, "no pair has a value")
}

// TestHeatmapLarge: beyond LabelledNodes the cells are one image and the
// axes name every k-th node, so a 300-node map stays small in both
// formats (one rectangle and one label per cell made a 24 MB SVG).
func TestHeatmapLarge(t *testing.T) {
	const n = 300
	nodes := make([]string, n)
	values := make([][]float64, n)
	for i := range values {
		nodes[i] = "node" + strings.Repeat("x", i%3) + string(rune('a'+i%26))
		values[i] = make([]float64, n)
		for j := range values[i] {
			values[i][j] = 10 + float64((i*7+j*13)%100)/10
		}
		values[i][i] = math.NaN()
	}
	p, err := New("RDMAWrite/size=2 p50", "us", nodes, values)
	require.NoError(t, err)
	dir := t.TempDir()
	side := Size(n)
	for _, format := range []string{"png", "svg"} {
		f, err := os.Create(filepath.Join(dir, "heatmap."+format))
		require.NoError(t, err)
		require.NoError(t, Save(f, p, side, format))
		require.NoError(t, f.Close())
	}
	svg, err := os.ReadFile(filepath.Join(dir, "heatmap.svg"))
	require.NoError(t, err)
	assert.Less(t, len(svg), 2<<20)
	assert.Equal(t, 1, strings.Count(string(svg), "<image "))
	assert.NotContains(t, string(svg), ">10.7<", "no per-cell labels")
	f, err := os.Open(filepath.Join(dir, "heatmap.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 30*96, img.Bounds().Dx(), "30 inches at 96 dpi")
	xt, _ := ticks(nodes)
	assert.Len(t, xt, 60)
}
