package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/artifacts"
)

// resultSet writes artifacts as go test -artifacts lays them out: one
// directory per benchmark and repetition, each with latency.hlog. Sizes 2
// and 4096; sample i of repetition r is base + (i % 100) ns.
func resultSet(t *testing.T, base int64) string {
	root := t.TempDir()
	for _, size := range []int{2, 4096} {
		for rep := range 2 {
			dir := filepath.Join(root, "_artifacts", "BenchmarkRDMAWrite__size="+fmt.Sprint(size), fmt.Sprint(rep))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			raw := make([]int64, 1000)
			for i := range raw {
				raw[i] = base*int64(1+size/1024) + int64(i%100)
			}
			_, err := artifacts.WriteHlog(dir, artifacts.LatencyBase, fmt.Sprintf("BenchmarkRDMAWrite/size=%d", size), artifacts.FromSamples(raw))
			require.NoError(t, err)
		}
	}
	return root
}

func TestCompare(t *testing.T) {
	old, new := resultSet(t, 10000), resultSet(t, 9000)
	out := filepath.Join(t.TempDir(), "cmp.png")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-o", out, old, new}, &stdout, &stderr), stderr.String())
	text := stdout.String()
	t.Logf("\n%s", text)
	// Two repetitions merged: 2000 samples a side; size=2 before size=4096.
	assert.Contains(t, text, "BenchmarkRDMAWrite/size=2      2000/2000")
	assert.Less(t, strings.Index(text, "size=2 "), strings.Index(text, "size=4096"))
	// p50 of size=2: 10049 -> 9049 ns, read from the histogram (8 ns
	// buckets there) as their buckets' highest values.
	assert.Contains(t, text, "10.05 -> 9.055 0.901x")
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)

	svg := filepath.Join(t.TempDir(), "cmp.svg")
	require.Equal(t, 0, run([]string{"-o", svg, "-match", "size=4096", old, new}, &stdout, &stderr), stderr.String())
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	var root struct{ XMLName xml.Name }
	require.NoError(t, xml.Unmarshal(b, &root))
	assert.Equal(t, "svg", root.XMLName.Local)
	assert.True(t, bytes.Contains(b, []byte("old size=4096")), "legend names the old curve")
	assert.False(t, bytes.Contains(b, []byte("size=2<")), "-match left size=2 out")
}

// Raw sample files, as RDMABENCH_SAMPLES_DIR leaves them (perftest -U
// style, one-way ns with .0 or .5), are read too, named after the file.
func TestRawSamples(t *testing.T) {
	sets := make([]string, 2)
	for i, base := range []int{10000, 12000} {
		sets[i] = t.TempDir()
		for rep := range 2 {
			var b strings.Builder
			for j := range 500 {
				fmt.Fprintf(&b, "%d.5\n", base+j%50)
			}
			name := filepath.Join(sets[i], fmt.Sprintf("BenchmarkRDMAWrite_size-2.%d.txt", 1000+rep))
			require.NoError(t, os.WriteFile(name, []byte(b.String()), 0o644))
		}
	}
	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "raw.svg")
	require.Equal(t, 0, run([]string{"-o", out, sets[0], sets[1]}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "BenchmarkRDMAWrite_size-2      1000/1000   10.03 -> 12.03 1.199x")
	assert.FileExists(t, out)
}

func TestBadInput(t *testing.T) {
	old := resultSet(t, 10000)
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{old}, 2, "want two result sets"},
		{[]string{"-o", "x.jpg", old, old}, 2, "want a file name ending in .png or .svg"},
		{[]string{"-o", filepath.Join(empty, "x.png"), old, empty}, 1, "no .hlog or Benchmark*.txt files"},
		{[]string{"-o", filepath.Join(empty, "x.png"), "-match", "nothing", old, old}, 1, "no benchmark is in both sets"},
		{[]string{"-match", "(", old, old}, 2, "-match"},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, tc.code, run(tc.args, &stdout, &stderr), tc.args)
		assert.Contains(t, stderr.String(), tc.want)
	}
}
