package testenv

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/envtest"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestCheckPortDevice asks the real device for a port it lacks (in the VM:
// RDMABENCH_PORT=7 on rxe0), before any RDMA object beyond the probe.
func TestCheckPortDevice(t *testing.T) {
	c := MustHaveRDMA(t)
	require.NoError(t, env.CheckPort(verbs.Probe{}, c.Device, 1))
	err := env.CheckPort(verbs.Probe{}, c.Device, 7)
	if c.InVM {
		assert.EqualError(t, err, "RDMABENCH_PORT=7: "+c.Device+" has ports 1..1; set RDMABENCH_PORT=1 or unset it")
	} else {
		assert.ErrorContains(t, err, "RDMABENCH_PORT=7: "+c.Device+" has ports 1..")
	}
	c.Port = 7
	_, err = env.Usable(verbs.Probe{}, c)
	assert.ErrorContains(t, err, "RDMABENCH_PORT=7: ")
}

// TestNewPairPeerErrors: in two-node mode NewPair fails fast, naming the
// variable, when nothing listens at RDMABENCH_PEER or it is not an
// rdmapeer. No device is needed: the peer is reached first.
func TestNewPairPeerErrors(t *testing.T) {
	closedAddr := "127.0.0.1:1" // nothing listens there; a just-closed ephemeral port can be reused by a parallel test
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	for _, tc := range []struct {
		peer string
		is   error
		want string
	}{
		{closedAddr, nil, "RDMABENCH_PEER: cannot reach rdmapeer at " + closedAddr + " (is it running there?): connect: connection refused"},
		{silent.Addr().String(), oob.ErrNotPeer, "RDMABENCH_PEER: " + silent.Addr().String() + " is not an rdmapeer (got no answer within 300ms)"},
	} {
		c, err := env.LoadFrom(envtest.Getenv(env.VarPeer, tc.peer, env.VarDevice, "nodev0", env.VarCPUs, "none", env.VarTimeout, "300ms"))
		require.NoError(t, err)
		start := time.Now()
		p, err := NewPair(c, spec.Write, 4096)
		assert.Nil(t, p)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		}
		assert.Less(t, time.Since(start), 2*time.Second)
	}
}
