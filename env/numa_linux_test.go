package env

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestBindThreadMemory: memory populated under the binding lands on the
// node (here the host's node 0, the only one a one-node host has; the VM
// test TestNUMAPlacement shows node 1 on a two-node guest), and the
// thread's policy is the default again after restore.
func TestBindThreadMemory(t *testing.T) {
	nodes := OnlineNodes(os.DirFS("/"))
	if len(nodes) == 0 {
		t.Skip("skipping test: the kernel lists no NUMA node (/sys/devices/system/node/online)")
	}
	restore, err := OnNode(nodes[len(nodes)-1]).BindThreadMemory()
	require.NoError(t, err)
	b, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	restore()
	require.NoError(t, err)
	defer unix.Munmap(b)
	got, err := PageNodes(b)
	require.NoError(t, err)
	require.Len(t, got, (1<<16)/unix.Getpagesize())
	for _, n := range got {
		assert.Equal(t, nodes[len(nodes)-1], n)
	}
	restore, err = Node{}.BindThreadMemory()
	require.NoError(t, err)
	restore()
}
