package hostinfo

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestDeviceOrderInVM adds rxe2..rxe11 (each on a veth of its own) to the
// guest's rxe0 and rxe1, so that names sorted as strings (rxe10 before
// rxe2) and libibverbs' order differ, and checks that the tools' device
// list (SysfsProbe, what rdmacheck and rdmatune use) is libibverbs' (what
// the benchmarks use), so both pick and name the same default device. The
// devices and veths are removed when the test ends.
func TestDeviceOrderInVM(t *testing.T) {
	if os.Getenv(env.VarVM) != "1" {
		t.Skip("skipping: adds rxe devices to the soft-RoCE guest; runs inside it (go test -exec bin/rxevm)")
	}
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		require.NoError(t, err, "%s: %s", strings.Join(args, " "), out)
	}
	for i := 2; i <= 11; i++ {
		veth, peer, dev := fmt.Sprintf("rbord%d", i), fmt.Sprintf("rbordp%d", i), fmt.Sprintf("rxe%d", i)
		run("/usr/bin/ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
		t.Cleanup(func() {
			if out, err := exec.Command("/usr/bin/ip", "link", "del", veth).CombinedOutput(); err != nil {
				t.Errorf("ip link del %s: %v: %s", veth, err, out)
			}
		})
		run("/usr/bin/ip", "link", "set", veth, "up")
		run("/usr/bin/ip", "link", "set", peer, "up")
		run("/usr/bin/rdma", "link", "add", dev, "type", "rxe", "netdev", veth)
		t.Cleanup(func() {
			if out, err := exec.Command("/usr/bin/rdma", "link", "delete", dev).CombinedOutput(); err != nil {
				t.Errorf("rdma link delete %s: %v: %s", dev, err, out)
			}
		})
	}
	devs, err := verbs.Devices()
	require.NoError(t, err)
	var want []string
	for _, d := range devs {
		want = append(want, d.Name)
	}
	require.Len(t, want, 12)
	require.Contains(t, want, "rxe10")

	var got []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got, err = (SysfsProbe{os.DirFS("/")}).Devices(); err == nil && len(got) == len(want) {
			break
		}
	}
	require.NoError(t, err)
	assert.Equal(t, want, got, "the tools list devices in libibverbs' order")
	assert.NotEqual(t, "rxe10", got[2], "not sorted as strings")
	benchDefault, err := env.FirstActive(verbs.Probe{})
	require.NoError(t, err)
	assert.Equal(t, benchDefault, firstDevice(os.DirFS("/")), "rdmacheck's default device is the benchmark's")
}
