package env

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/envtest"
)

func TestLoadGapAndMemory(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(VarGap, "10us", VarHugePages, "1", VarODP, "1"))
	require.NoError(t, err)
	assert.Equal(t, 10*time.Microsecond, c.Gap)
	assert.True(t, c.HugePages)
	assert.True(t, c.ODP)
	for _, zero := range []string{"", "0", "0s"} {
		c, err = LoadFrom(envtest.Getenv(VarGap, zero))
		require.NoError(t, err, zero)
		assert.Zero(t, c.Gap, zero)
	}
	// The longest gap that the default 5s timeout allows is MaxGap.
	c, err = LoadFrom(envtest.Getenv(VarGap, "1s"))
	require.NoError(t, err)
	assert.Equal(t, time.Second, c.Gap)
	for _, bad := range []string{"10", "-1us", "2s", "soon"} {
		_, err = LoadFrom(envtest.Getenv(VarGap, bad))
		assert.EqualError(t, err, `RDMABENCH_GAP="`+bad+`": want the idle time before each round trip as a Go duration from 0 to 1s, e.g. RDMABENCH_GAP=10us`, bad)
	}
	_, err = LoadFrom(envtest.Getenv(VarGap, "100ms", VarTimeout, "100ms"))
	assert.EqualError(t, err, `RDMABENCH_GAP="100ms" is not shorter than RDMABENCH_TIMEOUT (100ms): the responder waits out each gap within it; shorten the gap or raise RDMABENCH_TIMEOUT`)
	_, err = LoadFrom(envtest.Getenv(VarHugePages, "yes"))
	assert.EqualError(t, err, `RDMABENCH_HUGEPAGES="yes": use 1 (reserved huge pages, vm.nr_hugepages), thp (transparent huge pages) or 0`)
	c, err = LoadFrom(envtest.Getenv(VarHugePages, "thp"))
	require.NoError(t, err)
	assert.True(t, c.THP)
	assert.False(t, c.HugePages)
	_, err = LoadFrom(envtest.Getenv(VarODP, "2"))
	assert.EqualError(t, err, `RDMABENCH_ODP="2": use 1 or 0`)
}

func TestLoadLoad(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(VarLoad, "64K"))
	require.NoError(t, err)
	assert.Equal(t, 65536, c.Load)
	c, err = LoadFrom(envtest.Getenv(VarLoad, "0"))
	require.NoError(t, err)
	assert.Zero(t, c.Load)
	for _, bad := range []string{"-1", "9M", "lots"} {
		_, err = LoadFrom(envtest.Getenv(VarLoad, bad))
		assert.EqualError(t, err, `RDMABENCH_LOAD="`+bad+`": want the load stream's message size from 1 byte to 8M, e.g. RDMABENCH_LOAD=64K (0: no load)`, bad)
	}
	// Two-node mode: rdmapeer holds the stream's target.
	c, err = LoadFrom(envtest.Getenv(VarLoad, "64K", VarPeer, "nodeB"))
	require.NoError(t, err)
	assert.Equal(t, 65536, c.Load)
}
