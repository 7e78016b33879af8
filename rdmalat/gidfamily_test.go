package rdmalat

import (
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/verbs"
)

func rawGID(t *testing.T, ip string) [16]byte {
	t.Helper()
	a := net.ParseIP(ip)
	require.NotNil(t, a, ip)
	return [16]byte(a.To16())
}

// TestCheckGIDFamily: a RoCE pair whose GIDs are of different IP versions
// fails before any packet is sent, naming both GIDs and the variable to
// set; the same versions, InfiniBand (no GRH) and a peer without a GID
// pass.
func TestCheckGIDFamily(t *testing.T) {
	v6 := verbs.GID{Index: 3, Type: verbs.GIDTypeRoCEv2, Raw: rawGID(t, "fd00:77::1")}
	v4 := verbs.GID{Index: 11, Type: verbs.GIDTypeRoCEv2, Raw: rawGID(t, "192.168.77.1")}

	err := checkGIDFamily("mlx5_0", v6, rawGID(t, "192.168.77.2"), true)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrGIDFamily))
	assert.Contains(t, err.Error(), "GID 3 of mlx5_0 is IPv6 (fd00:77::1) but the peer's is IPv4 (192.168.77.2): set RDMABENCH_GID_INDEX on one side")

	err = checkGIDFamily("rxe0", v4, rawGID(t, "fe80::1"), true)
	assert.ErrorIs(t, err, ErrGIDFamily)
	assert.Contains(t, err.Error(), "GID 11 of rxe0 is IPv4")

	assert.NoError(t, checkGIDFamily("rxe0", v4, rawGID(t, "10.0.0.2"), true))
	assert.NoError(t, checkGIDFamily("rxe0", v6, rawGID(t, "fe80::2"), true))
	assert.NoError(t, checkGIDFamily("mlx5_0", v6, rawGID(t, "192.168.77.2"), false), "InfiniBand routes by LID")
	assert.NoError(t, checkGIDFamily("rxe0", v4, [16]byte{}, true), "a peer that sent no GID")
}
