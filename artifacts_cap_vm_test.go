package rdmabench

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestArtifactsSampleCap: with RDMABENCH_MAX_SAMPLES=100 a 300-iteration
// run writes its first 100 raw samples and says so, while the histogram
// still holds all 300.
func TestArtifactsSampleCap(t *testing.T) {
	testenv.MustHaveRDMA(t)
	out, text := writeArtifacts(t, 1, env.VarSizes+"=2", env.VarWarmup+"=50", env.VarMaxSamples+"=100")
	assert.Contains(t, text, "raw samples: wrote the first 100 of 300 (RDMABENCH_MAX_SAMPLES=100)")
	n := 0
	require.NoError(t, filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != artifacts.LatencyBase+artifacts.SamplesExt {
			return err
		}
		n++
		samples, err := artifacts.ReadSamples(path)
		require.NoError(t, err)
		assert.Len(t, samples, 100, "the first 100 samples")
		hs, err := artifacts.ReadHlog(filepath.Join(filepath.Dir(path), artifacts.LatencyBase+artifacts.HlogExt))
		require.NoError(t, err)
		require.Len(t, hs, 1)
		assert.Equal(t, int64(300), hs[0].TotalCount(), "the histogram holds every sample")
		return nil
	}))
	assert.Equal(t, 1, n, "one run's samples; output:\n%s", text)
}
