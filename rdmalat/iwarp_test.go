package rdmalat

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestCheckIWARP: on an iWARP device (node type RNIC) UC, UD, atomics and
// a connection without rdma_cm are refused with the iWARP reason and what
// to set; RC write, read and send through rdma_cm pass; other devices are
// not checked.
func TestCheckIWARP(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  EndpointConfig
		want string // "" passes
	}{
		{"write over CM", EndpointConfig{Op: spec.Write, Transport: spec.RC, CM: true}, ""},
		{"read over CM", EndpointConfig{Op: spec.Read, Transport: spec.RC, CM: true}, ""},
		{"send over CM", EndpointConfig{Op: spec.Send, Transport: spec.RC, CM: true}, ""},
		{"no CM", EndpointConfig{Op: spec.Write, Transport: spec.RC}, "siw0 is an iWARP device: not available on iWARP: unsupported operation (its queue pairs connect over TCP, which needs rdma_cm: set RDMABENCH_CM=1)"},
		{"UC", EndpointConfig{Op: spec.Write, Transport: spec.UC, CM: true}, "iWARP has reliable connections only, no UC: set RDMABENCH_TRANSPORT=rc"},
		{"UD", EndpointConfig{Op: spec.Send, Transport: spec.UD, CM: true}, "no UD"},
		{"atomic", EndpointConfig{Op: spec.FetchAdd, Transport: spec.RC, CM: true}, "iWARP has no atomic operations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkIWARP("siw0", verbs.NodeRNIC, tc.cfg)
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrIWARP)
				assert.ErrorIs(t, err, errors.ErrUnsupported)
				assert.Contains(t, err.Error(), tc.want)
			}
			assert.NoError(t, checkIWARP("mlx5_0", verbs.NodeCA, tc.cfg), "not iWARP")
		})
	}
}

// TestInitiatorAccess: READ's initiator buffer takes remote writes on
// iWARP only, where READ responses are written into it.
func TestInitiatorAccess(t *testing.T) {
	assert.Equal(t, verbs.AccessRemoteRead|verbs.AccessRemoteWrite, initiatorAccess(spec.Read, verbs.NodeRNIC))
	assert.Equal(t, verbs.AccessRemoteRead, initiatorAccess(spec.Read, verbs.NodeCA))
	assert.Equal(t, verbs.AccessRemoteWrite, initiatorAccess(spec.Write, verbs.NodeRNIC))
	assert.Equal(t, verbs.Access(0), initiatorAccess(spec.Send, verbs.NodeRNIC))
}

// TestRemoteAccessPerOp: each operation's buffer and queue pair grant the
// peer the one right the operation needs (docs/security.md, "Access
// rights a session grants"): a write session's buffer cannot be read, a
// read session's cannot be written, and a send session grants nothing
// remote. The memory region adds LOCAL_WRITE (newEndpoint).
func TestRemoteAccessPerOp(t *testing.T) {
	want := map[spec.Op]verbs.Access{
		spec.Write: verbs.AccessRemoteWrite, spec.WriteImm: verbs.AccessRemoteWrite,
		spec.Read:     verbs.AccessRemoteRead,
		spec.FetchAdd: verbs.AccessRemoteAtomic, spec.CompareSwap: verbs.AccessRemoteAtomic,
		spec.Send: 0, spec.SendImm: 0,
	}
	require.Len(t, want, len(spec.Ops), "every operation has its row")
	for _, op := range spec.Ops {
		assert.Equal(t, want[op], initiatorAccess(op, verbs.NodeCA), "%s on InfiniBand/RoCE", op)
		assert.Equal(t, want[op], remoteAccess(op), "%s: rdma_cm's queue pair", op)
	}
}
