package report

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/internal/latplot"
	"github.com/rdmabench/rdmabench/internal/summary"
)

// fakeRun returns n samples around base ns with a stall every 500.
func fakeRun(n int, base int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = base + int64(i*37%1000)
		if i%500 == 499 {
			s[i] = base * 20
		}
	}
	return s
}

// writeResults lays out what make bench leaves, as go test -artifacts
// in the VM does: out/artifacts/_artifacts/<number>/ per run and per
// benchmark, the summaries naming the guest's directories; and
// out/bench.txt with the matching result lines. It returns out.
func writeResults(t *testing.T) string {
	out := t.TempDir()
	root := filepath.Join(out, "artifacts", "_artifacts")
	var bench strings.Builder
	bench.WriteString("rdma-device: rxe0\nrdma-transport: rc\n")
	dirN := 100
	for _, b := range []struct {
		name  string
		sizes []int
		base  int64
	}{{"BenchmarkRDMAWrite", []int{2, 4096}, 10000}, {"BenchmarkRDMARead", []int{2, 4096}, 20000}} {
		sum := artifacts.Summary{Benchmark: b.name}
		for _, size := range b.sizes {
			for rep := range 6 {
				dirN++
				dir := filepath.Join(root, fmt.Sprint(dirN))
				require.NoError(t, os.MkdirAll(dir, 0o755))
				samples := fakeRun(1000, b.base*int64(1+size/1024)+int64(rep*100))
				name := fmt.Sprintf("%s/size=%d", b.name, size)
				// The second benchmark's plots are left to DrawPlots, as make
				// bench leaves them.
				noPlots := b.name == "BenchmarkRDMARead"
				h := artifacts.FromSamples(samples)
				res, err := artifacts.Write(dir, artifacts.Run{Name: name, Size: size, Hist: h, Samples: samples})
				require.NoError(t, err)
				if !noPlots {
					plots, err := latplot.WritePlots(dir, name, h)
					require.NoError(t, err)
					res.Files = append(res.Files, plots...)
				}
				res.Dir = fmt.Sprintf("/rxevm/out/_artifacts/%d", dirN) // the guest's path
				sum.Results = append(sum.Results, res)
				fmt.Fprintf(&bench, "%s \t1000\t%d ns/op\t%d min-ns\t%d p50-ns\t%d p99-ns\t%d max-ns\t%d stalls\n",
					name, samples[0], int64(res.Min), int64(res.Percentiles["p50"]), int64(res.Percentiles["p99"]), int64(res.Max), res.Stalls)
			}
		}
		dirN++
		dir := filepath.Join(root, fmt.Sprint(dirN))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		_, err := artifacts.WriteSummary(dir, sum)
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(out, "bench.txt"), []byte(bench.String()), 0o644))
	return out
}

// build is what rdmasummary does with -out and -artifacts.
func build(t *testing.T, out string) string {
	f, err := summary.ReadFile(filepath.Join(out, "bench.txt"))
	require.NoError(t, err)
	tab := summary.Summarize(f, summary.DefaultOptions)
	var text strings.Builder
	require.NoError(t, tab.Format(&text))
	benches, err := LoadArtifacts(out, filepath.Join(out, "artifacts"))
	require.NoError(t, err)
	require.NoError(t, DrawPlots(out, benches))
	merged, err := Merged(out, benches)
	require.NoError(t, err)
	require.NoError(t, Overview(filepath.Join(out, OverviewFile), tab, merged))
	index, err := WriteIndex(out, Page{Title: "test results", Summary: text.String(), Overview: OverviewFile, Files: []string{"bench.txt"}, Benches: benches})
	require.NoError(t, err)
	return index
}

func TestDrawPlots(t *testing.T) {
	out := writeResults(t)
	benches, err := LoadArtifacts(out, filepath.Join(out, "artifacts"))
	require.NoError(t, err)
	read := benches[0].Runs[0]
	require.Equal(t, "BenchmarkRDMARead/size=2", read.Name)
	_, ok := read.File("histogram.png")
	require.False(t, ok, "left to DrawPlots")
	require.NoError(t, DrawPlots(out, benches))
	for _, b := range benches {
		for _, r := range b.Runs {
			for _, f := range []string{"histogram.png", "histogram.svg", "tail.png", "tail.svg"} {
				p, ok := r.File(f)
				if assert.True(t, ok, "%s #%d: %s", r.Name, r.Rep, f) {
					assert.FileExists(t, filepath.Join(out, p))
				}
			}
		}
	}
	assert.Equal(t, 7, len(benches[0].Runs[0].Files), "drawn once, not again")
	require.NoError(t, DrawPlots(out, benches))
	assert.Equal(t, 7, len(benches[0].Runs[0].Files))
}

func TestLoadArtifacts(t *testing.T) {
	out := writeResults(t)
	benches, err := LoadArtifacts(out, filepath.Join(out, "artifacts"))
	require.NoError(t, err)
	require.Len(t, benches, 2)
	assert.Equal(t, "BenchmarkRDMARead", benches[0].Name, "in name order")
	require.Len(t, benches[1].Runs, 12)
	r := benches[1].Runs[0]
	assert.Equal(t, "artifacts/_artifacts/101", r.RelDir, "the guest's directory found beside the summary's")
	assert.Empty(t, r.Missing)
	assert.Equal(t, 1, r.Rep)
	assert.Equal(t, 6, benches[1].Runs[5].Rep)
	p, ok := r.File("histogram.png")
	assert.True(t, ok)
	assert.Equal(t, "artifacts/_artifacts/101/histogram.png", p)
	merged, err := Merged(out, benches)
	require.NoError(t, err)
	assert.Equal(t, int64(6000), merged["BenchmarkRDMAWrite/size=2"].TotalCount(), "six runs' samples together")

	// A file the summary names that is not there is reported, not linked.
	require.NoError(t, os.Remove(filepath.Join(out, "artifacts/_artifacts/101/tail.png")))
	benches, err = LoadArtifacts(out, filepath.Join(out, "artifacts"))
	require.NoError(t, err)
	assert.Equal(t, []string{"tail.png"}, benches[1].Runs[0].Missing)
	_, ok = benches[1].Runs[0].File("tail.png")
	assert.False(t, ok)

	_, err = LoadArtifacts(out, t.TempDir())
	assert.ErrorContains(t, err, "no summary.json")
}

// links returns every href and src of an HTML page, anchors left out.
func links(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?:href|src)="([^"#][^"]*)"`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestIndexLinksExist(t *testing.T) {
	out := writeResults(t)
	index := build(t, out)
	b, err := os.ReadFile(index)
	require.NoError(t, err)
	page := string(b)
	ls := links(page)
	// Per run: a thumbnail (image and link) and 7 file links; the two
	// summaries; the picture (image and link); bench.txt.
	assert.Equal(t, 24*9+2+2+1, len(ls))
	for _, l := range ls {
		assert.FileExists(t, filepath.Join(out, filepath.FromSlash(l)))
	}
	for _, want := range []string{"BenchmarkRDMAWrite/size=4096 #6", `href="artifacts/_artifacts/113/summary.json"`, "RDMARead"} {
		assert.Contains(t, page, want)
	}
	f, err := os.Open(filepath.Join(out, OverviewFile))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	// Three panels in a row (size against latency, the tails at 2 B and
	// at 4 KiB), each 7 inches at 96 dpi.
	assert.Equal(t, 3*7*96, img.Bounds().Dx())
}
