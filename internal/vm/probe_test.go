package vm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

func TestMeasuringHostCPUs(t *testing.T) {
	for _, tc := range []struct {
		name string
		pin  []int
		smp  int
		want []int
	}{
		{"smp 4 on two host CPUs: vCPUs 2,3 on host 0,1", []int{0, 1}, 4, []int{0, 1}},
		{"smp 4 on four", []int{4, 5, 6, 7}, 4, []int{6, 7}},
		{"smp 2 on two", []int{8, 9}, 2, []int{8, 9}},
		{"smp 4 on one host CPU: nothing to compare", []int{3}, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := measuringHostCPUs(tc.pin, tc.smp)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	// Unpinned: the last two CPUs this process may use.
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	got, err := measuringHostCPUs(nil, 4)
	require.NoError(t, err)
	if len(allowed) >= 2 {
		assert.Equal(t, allowed[len(allowed)-2:], got)
	} else {
		assert.Nil(t, got)
	}
}

// TestProbeHost runs the real probe (about 1 s) and checks what the
// guest receives: the variable and a value in cpuprobe's format, which
// hostinfo's check parses.
func TestProbeHost(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	if len(allowed) < 2 {
		t.Fatalf("needs two CPUs; this process may use %s", env.FormatCPUList(allowed))
	}
	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, format) }
	vars := probeHost(t.Context(), 4, nil, logf)
	require.Len(t, vars, 1)
	k, v, _ := strings.Cut(vars[0], "=")
	assert.Equal(t, env.VarHostCPUContention, k)
	_, err = hostinfo.ParseContention(v)
	assert.NoError(t, err, "hostinfo reads back what rxevm passes")
	assert.Equal(t, []string{"host CPU probe: %s"}, logged)
}
