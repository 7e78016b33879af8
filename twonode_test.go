package rdmabench

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestTwoNodeBenchmark runs BenchmarkRDMAWrite, unchanged, in two-node
// mode: this test serves as the peer (package peer, what rdmapeer runs) on
// the second device, and runs the benchmark in a child process of this
// test binary with RDMABENCH_PEER pointing at it. The results and config
// lines must be those of loopback mode, with the mode and the peer's
// device saying two-node.
func TestTwoNodeBenchmark(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	peerDev := testenv.MustHaveSecondDevice(t, c)
	cpus, err := env.DefaultCPUs()
	require.NoError(t, err)
	require.Len(t, cpus, 2, "a CPU for the initiator and one for the peer")
	var mu sync.Mutex
	var log []string
	srv := peer.New(peer.Config{
		Session: peer.ServeConfig{Device: peerDev, GIDIndex: -1},
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
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$", "-test.benchtime=300x", "-test.count=2")
	cmd.Env = append(os.Environ(),
		env.VarPeer+"="+ln.Addr().String(),
		env.VarSizes+"=2,4096",
		env.VarCPUs+"="+itoa(cpus[0]),
		env.VarWarmup+"=200",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("benchmark output:\n%s", out)
	require.NoError(t, err)
	text := string(out)
	assert.Contains(t, text, "rdmabench-mode: two-node\n")
	assert.Contains(t, text, "rdma-device: "+c.Device+"\n")
	assert.Contains(t, text, "rdma-peer-device: "+peerDev+"\n")
	assert.Contains(t, text, "rdmabench-cpus: "+itoa(cpus[0])+"\n")
	result := regexp.MustCompile(`(?m)^BenchmarkRDMAWrite/size=(2|4096)-\d+\s+300\s+\d+ ns/op\s.*\sp50-ns\s.*\sp99-ns\s`)
	assert.Len(t, result.FindAllString(text, -1), 4, "two sizes, -count=2")

	// One session for the whole benchmark: four runs.
	for deadline := time.Now().Add(10 * time.Second); srv.Stats().Sessions == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, log, 1)
	assert.Contains(t, log[0], "device="+peerDev+" op=write max-size=4096 sizes=2,4096 runs=4 ")
	assert.Contains(t, log[0], "result=ok")
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTwoNodeBadPeer: an RDMABENCH_PEER that is malformed, where nothing
// listens, or that is not an rdmapeer fails BenchmarkRDMAWrite with a
// message saying so: not a skip, not a hang.
func TestTwoNodeBadPeer(t *testing.T) {
	testenv.MustHaveRDMA(t)
	// Port 1, not a port a listener just closed: the kernel hands a
	// freed ephemeral port to the next listener, and another package's
	// test running at the same time once took it (and never answered).
	closedAddr := closedPort(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0") // the kernel accepts; nobody answers
	require.NoError(t, err)
	defer silent.Close()
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct{ name, peer, want string }{
		{"malformed", "nodeB:x", `RDMABENCH_PEER="nodeB:x" has port "x", not a number from 1 to 65535; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{"unreachable", closedAddr, "RDMABENCH_PEER: cannot reach rdmapeer at " + closedAddr + " (is it running there?): connect: connection refused"},
		{"not a peer", silent.Addr().String(), "RDMABENCH_PEER: " + silent.Addr().String() + " is not an rdmapeer (got no answer within 1s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$", "-test.benchtime=10x")
			cmd.Env = append(os.Environ(), env.VarPeer+"="+tc.peer, env.VarTimeout+"=1s")
			start := time.Now()
			out, err := cmd.CombinedOutput()
			elapsed := time.Since(start)
			assert.Error(t, err, "the benchmark must fail")
			assert.Contains(t, string(out), tc.want)
			assert.Contains(t, string(out), "--- FAIL: BenchmarkRDMAWrite")
			assert.NotContains(t, string(out), "SKIP")
			assert.Less(t, elapsed, 20*time.Second)
			t.Logf("failed after %v:\n%s", elapsed.Round(time.Millisecond), out)
		})
	}
}

// closedPort returns 127.0.0.1:1, where nothing listens on a test host.
func closedPort(t *testing.T) string {
	t.Helper()
	const addr = "127.0.0.1:1"
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("something listens on %s; these tests need a port where nothing does", addr)
	}
	return addr
}
