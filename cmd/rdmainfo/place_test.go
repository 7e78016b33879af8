package main

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestChoosePlace(t *testing.T) {
	none := fmt.Errorf("%w: ibv_get_device_list found none", env.ErrNoDevice)
	badDev := fmt.Errorf(env.VarDevice+"=mlx5_9: no such RDMA device (present: [mlx5_0]): %w", os.ErrNotExist)
	badPort := fmt.Errorf(env.VarPort+"=7: rxe0 has ports 1..1; set RDMABENCH_PORT=1 or unset it: %w", env.ErrNoPort)
	for _, tc := range []struct {
		name    string
		forceVM bool
		c       env.Config
		dev     string
		devErr  error
		place   string
		msg     string // why, or the error
	}{
		{"device here", false, env.Config{}, "mlx5_0", nil, placeLocal, "running on the local RDMA device mlx5_0 (make bench VM=1 runs in the soft-RoCE VM instead)"},
		{"named device here", false, env.Config{Device: "rxe0"}, "rxe0", nil, placeLocal, "running on the local RDMA device rxe0 (make bench VM=1 runs in the soft-RoCE VM instead)"},
		{"no device here", false, env.Config{}, "", none, placeVM, "no local RDMA device (no usable RDMA device: ibv_get_device_list found none): running in the soft-RoCE VM (bin/rxevm)"},
		{"VM=1 with a device here", true, env.Config{}, "mlx5_0", nil, placeVM, "VM=1: running in the soft-RoCE VM (bin/rxevm)"},
		{"VM=1 with a named device", true, env.Config{Device: "mlx5_9"}, "", badDev, placeVM, "VM=1: running in the soft-RoCE VM (bin/rxevm)"},
		{"named device missing", false, env.Config{Device: "mlx5_9"}, "", badDev, "", badDev.Error() + "; unset RDMABENCH_DEVICE to run in the soft-RoCE VM, or run make bench VM=1"},
		{"named device, none here", false, env.Config{Device: "mlx5_0"}, "", none, "", none.Error() + "; unset RDMABENCH_DEVICE to run in the soft-RoCE VM, or run make bench VM=1"},
		{"peer, no device here", false, env.Config{Peer: "nodeB:18515", PeerDevice: "mlx5_1"}, "", none, "", none.Error() + "; unset RDMABENCH_PEER_DEVICE and RDMABENCH_PEER to run in the soft-RoCE VM, or run make bench VM=1"},
		{"bad port on a device here", false, env.Config{Port: 7}, "rxe0", badPort, "", badPort.Error()},
		{"bad port on the named device", false, env.Config{Device: "rxe0", Port: 7}, "rxe0", badPort, "", badPort.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			place, why, err := choosePlace(tc.forceVM, tc.c, tc.dev, tc.devErr)
			if tc.place == "" {
				require.Error(t, err)
				assert.Equal(t, tc.msg, err.Error())
				assert.ErrorIs(t, err, tc.devErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.place, place)
			assert.Equal(t, tc.msg, why)
		})
	}
}

// TestRunPlaceHere runs the real decision on this machine: on a host
// without RDMA it picks the VM; in the soft-RoCE VM (RDMABENCH_VM=1, where
// rxevm sets RDMABENCH_DEVICE=rxe0) it picks the local device, and a port
// rxe0 lacks fails with the ports it has.
func TestRunPlaceHere(t *testing.T) {
	var stdout, stderr bytes.Buffer
	rc := runPlace(&stdout, &stderr, false)
	t.Logf("rc %d, stdout %q, stderr %q", rc, stdout.String(), stderr.String())
	inVM := os.Getenv(env.VarVM) == "1"
	switch {
	case inVM:
		require.Equal(t, 0, rc)
		assert.Equal(t, "local\n", stdout.String())
		assert.Contains(t, stderr.String(), "running on the local RDMA device rxe")
	case testenv.HasRDMA() != nil && os.Getenv(env.VarDevice) == "" && os.Getenv(env.VarPeer) == "" && os.Getenv(env.VarPeerDevice) == "":
		require.Equal(t, 0, rc)
		assert.Equal(t, "vm\n", stdout.String())
		assert.Contains(t, stderr.String(), "no local RDMA device (")
	default:
		t.Skip("skipping: a device or a variable naming one here; the table test covers the decision")
	}

	stdout.Reset()
	stderr.Reset()
	assert.Equal(t, 0, runPlace(&stdout, &stderr, true), "VM=1 always picks the VM")
	assert.Equal(t, "vm\n", stdout.String())

	if inVM {
		t.Setenv(env.VarPort, "7")
		stdout.Reset()
		stderr.Reset()
		assert.Equal(t, 1, runPlace(&stdout, &stderr, false))
		assert.Empty(t, stdout.String())
		assert.Equal(t, "make bench: RDMABENCH_PORT=7: rxe0 has ports 1..1; set RDMABENCH_PORT=1 or unset it\n", stderr.String())
	}
}
