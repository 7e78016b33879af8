package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanRails: rdmafleet plan names the rails each pair measures in its
// header, paired by name or by position, and the rounds stay the same
// (the output still reads as a plan file); a peer device dst's rdmapeer
// would not serve is refused with what to type.
func TestPlanRails(t *testing.T) {
	plan := func(env map[string]string, args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := runPlan(t.Context(), append([]string{"-nodes", "n[1-4]"}, args...), func(k string) string { return env[k] }, &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	plain, _, code := plan(nil)
	require.Equal(t, 0, code)
	assert.NotContains(t, plain, "rails", "one device: the plan as before")

	for _, tc := range []struct {
		name   string
		env    map[string]string
		args   []string
		header string
	}{
		{"by name", nil, []string{"-rails", "mlx5_0,mlx5_1"},
			"# rails: each pair measures 2 rails in turn (src's device with dst's): mlx5_0 with mlx5_0, mlx5_1 with mlx5_1 (paired by name)\n"},
		{"from RDMABENCH_DEVICE", map[string]string{"RDMABENCH_DEVICE": "mlx5_0,mlx5_1"}, nil,
			"# rails: each pair measures 2 rails in turn (src's device with dst's): mlx5_0 with mlx5_0, mlx5_1 with mlx5_1 (paired by name)\n"},
		{"by position", map[string]string{"RDMABENCH_PEER_DEVICE": "mlx5_1,mlx5_0"}, []string{"-rails", "mlx5_0,mlx5_1"},
			"# rails: each pair measures 2 rails in turn (src's device with dst's): mlx5_0 with mlx5_1, mlx5_1 with mlx5_0 (paired by position: RDMABENCH_PEER_DEVICE)\n"},
		{"all", nil, []string{"-rails", "all"},
			"# rails: each pair measures every active device of src, in turn, each against dst's device of the same name (-rails all)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := plan(tc.env, tc.args...)
			require.Equal(t, 0, code, stderr)
			header, rest, _ := strings.Cut(out, "\n")
			assert.Equal(t, tc.header, header+"\n")
			assert.Equal(t, plain, rest, "the same rounds")
			// The plan with its rails header reads back as a plan file.
			file := filepath.Join(t.TempDir(), "plan.txt")
			require.NoError(t, os.WriteFile(file, []byte(out), 0o644))
			again, stderr, code := plan(nil, "-plan", file)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, again, "1 n1 n4\n")
		})
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"peer device not served", map[string]string{"RDMABENCH_PEER_DEVICE": "mlx5_2,mlx5_3"}, []string{"-rails", "mlx5_0,mlx5_1"},
			"rdmafleet plan: RDMABENCH_PEER_DEVICE=mlx5_2,mlx5_3: dst's rdmapeer serves the rails mlx5_0,mlx5_1 only (-rails): name each rail's peer among them, in the order of the rails (RDMABENCH_PEER_DEVICE=mlx5_1,mlx5_0 pairs rail mlx5_0 with mlx5_1), or unset RDMABENCH_PEER_DEVICE to pair each rail with the device of its name\n"},
		{"all with a list", map[string]string{"RDMABENCH_PEER_DEVICE": "mlx5_1,mlx5_0"}, []string{"-rails", "all"},
			"with RDMABENCH_DEVICE=all: a list pairs rails by position"},
		{"too few", map[string]string{"RDMABENCH_PEER_DEVICE": "mlx5_1,mlx5_0"}, []string{"-rails", "mlx5_0,mlx5_1,mlx5_2"},
			"names 2 devices for the 3 rails"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := plan(tc.env, tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
