package pmqos

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

func TestHoldAtFakeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu_dma_latency")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	r, err := HoldAt(path, 20*time.Microsecond+500*time.Nanosecond)
	require.NoError(t, err)
	assert.Equal(t, 20*time.Microsecond, r.Limit())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, uint32(20), binary.NativeEndian.Uint32(b))
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close twice")
	require.NoError(t, (*Request)(nil).Close())

	_, err = HoldAt(filepath.Join(t.TempDir(), "notexist"), 0)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = HoldAt(path, -time.Second)
	assert.ErrorContains(t, err, "out of range")
}

// On a kernel with PM QoS (the host when root, the VM): while held at 0,
// the limit in force reads 0; after Close it reads what it did before.
func TestHoldReal(t *testing.T) {
	before, ok := hostinfo.PMQoSLimit(hostinfo.Root)
	if !ok {
		if os.Getenv(env.VarVM) == "1" {
			t.Fatalf("%s not readable inside the VM", Device)
		}
		t.Skipf("skipping: %s not readable here (no PM QoS, or not root)", Device)
	}
	r, err := Hold(0)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	held, ok := hostinfo.PMQoSLimit(hostinfo.Root)
	require.True(t, ok)
	assert.Equal(t, 0, held)
	assert.Equal(t, "0us", hostinfo.PMQoS(hostinfo.Root))
	require.NoError(t, r.Close())
	after, _ := hostinfo.PMQoSLimit(hostinfo.Root)
	if before != 0 { // another process may hold 0 itself
		assert.NotEqual(t, 0, after, "the hold outlived Close")
	}
	t.Logf("PM QoS limit before %d us (-1: none), held 0, after %d", before, after)
}
