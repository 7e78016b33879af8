package env

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckCPUs(t *testing.T) {
	allowed := []int{0, 1, 2, 3}
	assert.NoError(t, checkCPUs(VarCPUs, []int{2, 3}, allowed, nil))
	assert.NoError(t, checkCPUs(VarCPUs, []int{0}, allowed, nil))
	assert.EqualError(t, checkCPUs(VarCPUs, []int{99, 100}, allowed, nil),
		"RDMABENCH_CPUS=99,100: this process may run on CPUs 0-3; e.g. RDMABENCH_CPUS=2,3 or none")
	assert.EqualError(t, checkCPUs(VarCPUs, []int{7}, []int{4, 5, 6}, nil),
		"RDMABENCH_CPUS=7: this process may run on CPUs 4-6; e.g. RDMABENCH_CPUS=6 or none")
	assert.EqualError(t, checkCPUs(VarCPUs, []int{1, 5}, []int{5}, nil),
		"RDMABENCH_CPUS=1,5: this process may run on CPUs 5; e.g. RDMABENCH_CPUS=5 or none")
}

// TestCheckCPUsThisProcess runs the check against this process's real
// affinity: CPU 100000 is never allowed, the allowed ones always are.
func TestCheckCPUsThisProcess(t *testing.T) {
	allowed, err := AllowedCPUs()
	require.NoError(t, err)
	require.NotEmpty(t, allowed)
	assert.NoError(t, Config{CPUs: allowed[:1]}.Check())
	err = Config{CPUs: []int{100000}}.Check()
	assert.ErrorContains(t, err, "RDMABENCH_CPUS=100000: this process may run on CPUs ")
	assert.NoError(t, Config{NoPin: true}.Check())
	assert.EqualError(t, CheckCPUs("-cpu", []int{100000}), fmt.Sprintf("-cpu=100000: this process may run on CPUs %s; e.g. -cpu=%d or none", FormatCPUList(allowed), allowed[len(allowed)-1]))
}

func TestCheckSamplesDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "samples")
	require.NoError(t, Config{SamplesDir: dir}.Check(), "a missing directory is made")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the probe file is removed")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	err = Config{SamplesDir: filepath.Join(file, "sub")}.Check()
	assert.EqualError(t, err, "RDMABENCH_SAMPLES_DIR="+file+"/sub: cannot write raw samples there: mkdir: not a directory; name a directory you can write to (e.g. RDMABENCH_SAMPLES_DIR=$PWD/out/samples) or unset it")

	if os.Geteuid() != 0 { // root writes anywhere
		ro := t.TempDir()
		require.NoError(t, os.Chmod(ro, 0o555))
		err = Config{SamplesDir: ro}.Check()
		assert.ErrorContains(t, err, "RDMABENCH_SAMPLES_DIR="+ro+": cannot write raw samples there: open: permission denied; name a directory")
	}
}
