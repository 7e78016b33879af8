package rdmabench

import (
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestArtifacts runs BenchmarkRDMAWrite with go test's -artifacts in a
// child process and checks what it leaves: for each size and repetition
// the raw samples (as many as b.N), the HDR log (decoding to b.N values),
// the percentile text and both plots (the PNG decodes); per benchmark a
// summary.json holding every size.
func TestArtifacts(t *testing.T) {
	testenv.MustHaveRDMA(t)
	out, text := writeArtifacts(t, 2, env.VarSizes+"=2,4096", env.VarWarmup+"=50")

	var runs, summaries []string
	require.NoError(t, filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Name() == artifacts.LatencyBase+".hlog":
			runs = append(runs, filepath.Dir(path))
		case d.Name() == artifacts.SummaryFile:
			summaries = append(summaries, path)
		}
		return nil
	}))
	require.Len(t, runs, 4, "2 sizes x -count 2, each its own directory; output:\n%s", text)
	for _, dir := range runs {
		samples, err := artifacts.ReadSamples(filepath.Join(dir, artifacts.LatencyBase+".samples.txt"))
		require.NoError(t, err)
		assert.Len(t, samples, 300, "every sample, b.N of them")
		hs, err := artifacts.ReadHlog(filepath.Join(dir, artifacts.LatencyBase+".hlog"))
		require.NoError(t, err)
		require.Len(t, hs, 1)
		assert.Equal(t, int64(300), hs[0].TotalCount())
		for _, name := range []string{"latency.hgrm", "histogram.svg", "tail.svg"} {
			assert.FileExists(t, filepath.Join(dir, name))
		}
		for _, name := range []string{"histogram.png", "tail.png"} {
			f, err := os.Open(filepath.Join(dir, name))
			require.NoError(t, err)
			_, err = png.Decode(f)
			f.Close()
			assert.NoError(t, err, "%s/%s", dir, name)
		}
	}
	require.Len(t, summaries, 1, "one summary per benchmark")
	sum, err := artifacts.ReadSummary(summaries[0])
	require.NoError(t, err)
	assert.True(t, sum.OneWay)
	require.Len(t, sum.Results, 4)
	sizes := map[int]int{}
	for _, r := range sum.Results {
		sizes[r.Size]++
		assert.Equal(t, int64(300), r.Count)
		assert.Contains(t, r.Percentiles, "p50")
		assert.True(t, strings.HasPrefix(r.Name, "BenchmarkRDMAWrite/size="))
	}
	assert.Equal(t, map[int]int{2: 2, 4096: 2}, sizes, "every size, unlike perftest's JSON")
	assert.NotEmpty(t, sum.Config["rdma-device"], "config lines recorded")
}

// writeArtifacts runs BenchmarkRDMAWrite for 300 round trips, count
// times, with go test's -artifacts in a child process of this test binary
// under the variables vars (NAME=value), requires it to succeed, and
// returns its output directory and what it printed.
func writeArtifacts(t *testing.T, count int, vars ...string) (dir, text string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	dir = t.TempDir()
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$", "-test.benchtime=300x",
		"-test.count="+itoa(count), "-test.cpu=1", "-test.artifacts", "-test.outputdir="+dir)
	cmd.Env = append(os.Environ(), vars...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return dir, string(b)
}
