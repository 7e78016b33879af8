package rdmabench

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestRailsNameEachRail: RDMABENCH_DEVICE=rxe0,rxe1 (the VM's two devices,
// on the two ends of a veth) makes one run measure each rail, named in a
// /rail=DEV level, under configuration lines that name its device; the
// result file reads as benchfmt and splits by rail.
func TestRailsNameEachRail(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	rails := c.Device + "," + second
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$", "-test.benchtime=50x", "-test.cpu=1")
	cmd.Env = append(os.Environ(), env.VarDevice+"="+rails, env.VarSizes+"=2", env.VarWarmup+"=10")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	devOf := map[string]string{} // benchmark name -> rdma-device in force
	r := benchfmt.NewReader(strings.NewReader(string(out)), "rails.txt")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			devOf[string(res.Name.Full())] = string(res.GetConfig("rdma-device"))
		}
	}
	require.NoError(t, r.Err())
	t.Logf("results by device: %v", devOf)
	for _, dev := range []string{c.Device, second} {
		name := "RDMAWrite/rail=" + dev + "/size=2"
		got, ok := devOf[name]
		if assert.True(t, ok, "a result named %s in:\n%s", name, out) {
			assert.Equal(t, dev, got, "%s runs under rdma-device: %s", name, dev)
		}
	}
	assert.Len(t, devOf, 2, "one result per rail, none without a rail")
}

// TestTwoNodeRails: BenchmarkRDMAWrite over two rails in two-node mode.
// This test serves as the peer (package peer, what rdmapeer runs) on both
// devices, and the benchmark runs in a child process with
// RDMABENCH_DEVICE=rxe0,rxe1 and RDMABENCH_PEER_DEVICE=rxe1,rxe0: each
// rail's session names the peer device it meets, so both cross the veth.
// The results name each rail under config lines naming its local and peer
// device; the peer logs one session per rail, each on the device named.
func TestTwoNodeRails(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	cpus, err := env.DefaultCPUs()
	require.NoError(t, err)
	require.Len(t, cpus, 2, "a CPU for the initiator and one for the peer")
	var mu sync.Mutex
	var log []string
	srv := peer.New(peer.Config{
		Session: peer.ServeConfig{Device: c.Device, Rails: []peer.Rail{{Device: second}}, GIDIndex: -1},
		CPUs:    []int{cpus[1]},
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			log = append(log, strings.TrimSpace(fmt.Sprintf(format, args...)))
		},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln)
	defer srv.Shutdown()

	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$", "-test.benchtime=100x", "-test.cpu=1")
	cmd.Env = append(os.Environ(),
		env.VarPeer+"="+ln.Addr().String(),
		env.VarDevice+"="+c.Device+","+second,
		env.VarPeerDevice+"="+second+","+c.Device,
		env.VarSizes+"=2",
		env.VarCPUs+"="+itoa(cpus[0]),
		env.VarWarmup+"=20",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("benchmark output:\n%s", out)
	require.NoError(t, err)

	type devices struct{ local, peer, mode string }
	got := map[string]devices{} // benchmark name -> the config lines in force
	r := benchfmt.NewReader(strings.NewReader(string(out)), "rails.txt")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			got[string(res.Name.Full())] = devices{res.GetConfig("rdma-device"), res.GetConfig("rdma-peer-device"), res.GetConfig("rdmabench-mode")}
		}
	}
	require.NoError(t, r.Err())
	assert.Equal(t, map[string]devices{
		"RDMAWrite/rail=" + c.Device + "/size=2": {c.Device, second, "two-node"},
		"RDMAWrite/rail=" + second + "/size=2":   {second, c.Device, "two-node"},
	}, got, "one result per rail, each under its local and peer device")

	// One session per rail, each answered on the device it named.
	for deadline := time.Now().Add(10 * time.Second); srv.Stats().Sessions < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var sessions []string
	for _, l := range log {
		if strings.HasPrefix(l, "session ") {
			sessions = append(sessions, l)
		}
	}
	require.Len(t, sessions, 2, "peer log:\n%s", strings.Join(log, "\n"))
	assert.Contains(t, sessions[0], "device="+second+" op=write max-size=2 sizes=2 runs=1 ", "rail %s's session", c.Device)
	assert.Contains(t, sessions[1], "device="+c.Device+" op=write max-size=2 sizes=2 runs=1 ", "rail %s's session", second)
	for _, s := range sessions {
		assert.Contains(t, s, "result=ok")
	}
}
