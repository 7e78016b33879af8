package rdmalat_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestGIDIndexZero: EndpointConfig's zero GIDIndex is the best GID, as
// GIDBest is (on rxe the IPv4-mapped entry 1, not the link-local entry 0);
// GIDIndex0 is the entry at index 0.
func TestGIDIndexZero(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	var linkLayer string
	index := func(gid int) int {
		ep, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: c.Device, GIDIndex: gid, MaxSize: 64})
		require.NoError(t, err)
		defer func() { require.NoError(t, ep.Close()) }()
		linkLayer = ep.Device().LinkLayer
		return ep.Device().GIDIndex
	}
	best := index(rdmalat.GIDBest)
	assert.Equal(t, best, index(0), "the zero GIDIndex is the best GID")
	assert.Equal(t, 0, index(rdmalat.GIDIndex0))
	if linkLayer == "Ethernet" {
		assert.NotEqual(t, 0, best, "on RoCE the best GID is not the link-local entry 0 (rxe: 1, IPv4-mapped)")
	}
}
