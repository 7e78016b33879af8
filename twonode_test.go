package rdmabench

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestTwoNodeBenchmark runs BenchmarkRDMAWrite, unchanged, in two-node
// mode: this test serves as the peer (package peer, what rdmapeer runs) on
// the second device, and runs the benchmark in a child process of this
// test binary with RDMABENCH_PEER pointing at it. The results and config
// lines must be those of loopback mode, with the mode and the peer's
// device saying two-node.
func TestTwoNodeBenchmark(t *testing.T) {
	c, tn := startTwoNodePeer(t)
	text := tn.bench(t, "-test.benchtime=300x", "-test.count=2", env.VarSizes+"=2,4096")
	assert.Contains(t, text, "rdmabench-mode: two-node\n")
	assert.Contains(t, text, "rdma-device: "+c.Device+"\n")
	assert.Contains(t, text, "rdma-peer-device: "+tn.device+"\n")
	assert.Contains(t, text, "rdmabench-cpus: "+itoa(tn.cpu)+"\n")
	result := regexp.MustCompile(`(?m)^BenchmarkRDMAWrite/size=(2|4096)-\d+\s+300\s+\d+ ns/op\s.*\sp50-ns\s.*\sp99-ns\s`)
	assert.Len(t, result.FindAllString(text, -1), 4, "two sizes, -count=2")

	// One session for the whole benchmark: four runs.
	log := tn.sessions(t, 1)
	assert.Contains(t, log[0], "device="+tn.device+" op=write max-size=4096 sizes=2,4096 runs=4 ")
	assert.Contains(t, log[0], "result=ok")
}

// TestTwoNodeBenchmarkLoad runs BenchmarkRDMAWrite in two-node mode with
// RDMABENCH_LOAD: every result carries the stream's throughput beside
// the latency, the config lines record the stream, and the peer served
// it as a load session of its own beside the measuring one.
func TestTwoNodeBenchmarkLoad(t *testing.T) {
	_, tn := startTwoNodePeer(t)
	text := tn.bench(t, "-test.benchtime=300x", "-test.count=2", env.VarSizes+"=64", env.VarLoad+"=4K")
	assert.Contains(t, text, "rdmabench-mode: two-node\n")
	assert.Contains(t, text, "rdmabench-load: 4096\n")
	result := regexp.MustCompile(`(?m)^BenchmarkRDMAWrite/size=64-\d+\s+300\s+\d+ ns/op\s.*\s([0-9.]+) load-MB/s\s.*$`)
	found := result.FindAllStringSubmatch(text, -1)
	assert.Len(t, found, 2, "-count=2, each with the load's throughput")
	for _, m := range found {
		mbps, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.Positive(t, mbps, m[0])
		assert.Contains(t, m[0], " p50-ns", "the latency beside it")
	}
	log := tn.sessions(t, 2)
	load := regexp.MustCompile(`device=` + tn.device + ` load-stream op=write max-size=4096 runs=\d+ bytes=[1-9]\d* .*result=ok`)
	assert.True(t, slices.ContainsFunc(log, load.MatchString), "a load session with bytes written: %q", log)
	assert.True(t, slices.ContainsFunc(log, func(l string) bool {
		return strings.Contains(l, "device="+tn.device+" op=write max-size=64 sizes=64 ") && strings.Contains(l, "result=ok")
	}), "the measuring session: %q", log)
	assert.Zero(t, tn.srv.Stats().Memory, "the peer holds no registered memory once both ended")
}

// twoNode is a peer (package peer, what rdmapeer runs) served by this
// test on the second device, pinned to the second CPU.
type twoNode struct {
	srv    *peer.Server
	addr   string
	device string
	cpu    int // the benchmark's
	mu     sync.Mutex
	log    []string
}

func startTwoNodePeer(t *testing.T) (env.Config, *twoNode) {
	c := testenv.MustHaveRDMA(t)
	tn := &twoNode{device: testenv.MustHaveSecondDevice(t, c)}
	cpus, err := env.DefaultCPUs()
	require.NoError(t, err)
	require.Len(t, cpus, 2, "a CPU for the initiator and one for the peer")
	tn.cpu = cpus[0]
	tn.srv = peer.New(peer.Config{
		Session: peer.ServeConfig{Device: tn.device, GIDIndex: -1},
		CPUs:    []int{cpus[1]},
		Logf: func(format string, args ...any) {
			tn.mu.Lock()
			defer tn.mu.Unlock()
			tn.log = append(tn.log, strings.TrimSpace(fmt.Sprintf(format, args...)))
		},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	tn.addr = ln.Addr().String()
	go tn.srv.Serve(ln)
	t.Cleanup(tn.srv.Shutdown)
	return c, tn
}

// bench runs BenchmarkRDMAWrite in a child process of this test binary
// with RDMABENCH_PEER pointing at the peer, and returns its output. Its
// arguments are test flags (-test.x) and variables (NAME=value).
func (tn *twoNode) bench(t *testing.T, args ...string) string {
	exe, err := os.Executable()
	require.NoError(t, err)
	flags := []string{"-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$"}
	vars := []string{env.VarPeer + "=" + tn.addr, env.VarCPUs + "=" + itoa(tn.cpu), env.VarWarmup + "=200"}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else {
			vars = append(vars, a)
		}
	}
	cmd := exec.Command(exe, flags...)
	cmd.Env = append(os.Environ(), vars...)
	out, err := cmd.CombinedOutput()
	t.Logf("benchmark output:\n%s", out)
	require.NoError(t, err)
	return string(out)
}

// sessions waits up to 10 s for n sessions to end and returns the peer's
// log, which then holds exactly their lines.
func (tn *twoNode) sessions(t *testing.T, n int) []string {
	for deadline := time.Now().Add(10 * time.Second); tn.srv.Stats().Sessions < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	tn.mu.Lock()
	defer tn.mu.Unlock()
	require.Len(t, tn.log, n, "%q", tn.log)
	return slices.Clone(tn.log)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTwoNodeBadPeer: an RDMABENCH_PEER that is malformed, where nothing
// listens, or that is not an rdmapeer fails BenchmarkRDMAWrite with a
// message saying so: not a skip, not a hang.
func TestTwoNodeBadPeer(t *testing.T) {
	testenv.MustHaveRDMA(t)
	closedAddr := rdmalattest.ClosedPort(t)
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
