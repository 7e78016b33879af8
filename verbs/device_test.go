package verbs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDevices(t *testing.T) {
	name := mustHaveDevice(t)
	devs, err := Devices()
	require.NoError(t, err)
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		names = append(names, d.Name)
		t.Logf("%s guid %v node %v", d.Name, d.GUID, d.NodeType)
	}
	assert.Contains(t, names, name)
	if envVM() {
		assert.Subset(t, names, []string{"rxe0", "rxe1"})
	}
}

func TestOpenNotExist(t *testing.T) {
	if !haveCgo {
		// Without cgo every constructor says what is missing.
		_, err := Open("notexist0")
		assert.ErrorIs(t, err, errors.ErrUnsupported)
		assert.Contains(t, err.Error(), "requires cgo and libibverbs")
		_, err = Devices()
		assert.ErrorIs(t, err, errors.ErrUnsupported)
		return
	}
	_, err := Open("notexist0")
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "ibv_open_device notexist0")
	if _, derr := probeDevice(); derr == nil {
		// The message lists the devices that do exist.
		devs, _ := Devices()
		for _, d := range devs {
			assert.Contains(t, err.Error(), d.Name)
		}
	}
	t.Log(err)
}

func TestEachDevice(t *testing.T) {
	mustHaveDevice(t)
	devs, err := Devices()
	require.NoError(t, err)
	for _, d := range devs {
		t.Run(d.Name, func(t *testing.T) {
			ctx := openNamed(t, d.Name)
			assert.Equal(t, d.Name, ctx.Name())
			a, err := ctx.Query()
			require.NoError(t, err)
			t.Logf("%+v", a)
			assert.NotZero(t, a.PhysPortCount)
			assert.NotZero(t, a.MaxQP)
			assert.NotZero(t, a.MaxQPWR)
			assert.NotZero(t, a.MaxCQE)
			assert.NotZero(t, a.MaxSGE)
			assert.NotZero(t, a.MaxMRSize)
			assert.NotZero(t, a.MaxInlineData, "probed max inline data")
			assert.Equal(t, d.GUID, a.NodeGUID)

			pa, err := ctx.QueryPort(1)
			require.NoError(t, err)
			t.Logf("port 1: %+v (state %v, active MTU %v, link %v)", pa, pa.State, pa.ActiveMTU, pa.LinkLayer)
			assert.NotZero(t, pa.ActiveMTU.Bytes())
			assert.NotZero(t, pa.GIDTableLen)

			gids, err := ctx.GIDs(1, 4)
			require.NoError(t, err)
			require.NotEmpty(t, gids)
			for _, g := range gids {
				assert.False(t, g.IsZero())
				t.Logf("gid %d %v %v", g.Index, g, g.Type)
			}
			best, err := BestGID(gids)
			require.NoError(t, err)
			g, err := ctx.GID(1, best.Index)
			require.NoError(t, err)
			assert.Equal(t, best, g)

			if envVM() && slices.Contains([]string{"rxe0", "rxe1"}, d.Name) {
				assert.Equal(t, LinkLayerEthernet, pa.LinkLayer)
				assert.Equal(t, PortActive, pa.State)
				assert.Equal(t, 1, best.Index, "rxe's best GID is the IPv4-mapped one")
				assert.Equal(t, GIDTypeRoCEv2, best.Type)
				assert.True(t, best.isIPv4())
				want := map[string]string{"rxe0": "192.168.77.1", "rxe1": "192.168.77.2"}[d.Name]
				assert.True(t, best.ip().Equal(net.ParseIP(want)), "best GID %v, want %v", best, want)
				assert.True(t, gids[0].IsLinkLocal(), "index 0 is the link-local GID")
			}
		})
	}
}

// TestQueryPortNotThere: a port the device lacks fails with EINVAL, and
// the message names the device and port and says where ports are listed.
func TestQueryPortNotThere(t *testing.T) {
	ctx := openDevice(t)
	attr, err := ctx.Query()
	require.NoError(t, err)
	port := attr.PhysPortCount + 6
	_, err = ctx.QueryPort(port)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EINVAL)
	assert.Equal(t, fmt.Sprintf("verbs: ibv_query_port %s port %d: invalid argument (ports count from 1; ibv_devinfo -d %s lists them)", ctx.Name(), port, ctx.Name()), err.Error())
}
