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
