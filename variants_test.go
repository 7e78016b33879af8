package rdmabench

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/testenv"
)

// A variant of the suite: the variables that select it, the benchmarks
// that run under it (the others skip, saying why) and its config lines.
type variant struct {
	name   string
	env    []string
	runs   []string // benchmark names, size excluded
	config []string
}

var (
	everyOp = []string{"BenchmarkRDMAWrite", "BenchmarkRDMAWriteImm", "BenchmarkRDMARead", "BenchmarkRDMASend",
		"BenchmarkRDMASendImm", "BenchmarkRDMAAtomic/op=fetch_add", "BenchmarkRDMAAtomic/op=compare_swap"}
	variants = []variant{
		{"rc", nil, everyOp, []string{"rdma-transport: rc", "rdma-completion: poll", "rdma-cm: off"}},
		{"uc", []string{env.VarTransport + "=uc"},
			[]string{"BenchmarkRDMAWrite", "BenchmarkRDMAWriteImm", "BenchmarkRDMASend", "BenchmarkRDMASendImm"},
			[]string{"rdma-transport: uc"}},
		{"ud", []string{env.VarTransport + "=ud"},
			[]string{"BenchmarkRDMASend", "BenchmarkRDMASendImm"}, []string{"rdma-transport: ud"}},
		{"events", []string{env.VarEvents + "=1"}, everyOp[1:], []string{"rdma-completion: events"}},
		{"cm", []string{env.VarCM + "=1"}, everyOp, []string{"rdma-cm: on", "rdma-transport: rc"}},
	}
)

// runVariant runs every benchmark of the suite in a child process of this
// test binary under v, and checks that exactly v.runs produced results,
// each size with its metrics, and that the others said why they skipped.
func runVariant(t *testing.T, v variant, extraEnv ...string) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkRDMA", "-test.benchtime=100x", "-test.cpu=1")
	cmd.Env = append(append(append(os.Environ(),
		env.VarSizes+"=2,1024", env.VarWarmup+"=50"), v.env...), extraEnv...)
	out, err := cmd.CombinedOutput()
	text := string(out)
	require.NoError(t, err, "benchmark output:\n%s", text)
	for _, c := range v.config {
		assert.Contains(t, text, "\n"+c+"\n")
	}
	result := regexp.MustCompile(`(?m)^(BenchmarkRDMA\S*)/size=(\d+)\s+100\s+\d+ ns/op\s(.*)$`)
	got := map[string][]string{}
	for _, m := range result.FindAllStringSubmatch(text, -1) {
		got[m[1]] = append(got[m[1]], m[2])
		for _, unit := range []string{" min-ns", " p50-ns", " p90-ns", " p99-ns", " max-ns", " 0 allocs/op"} {
			assert.Contains(t, m[3], unit, "%s/size=%s", m[1], m[2])
		}
	}
	for _, name := range v.runs {
		want := []string{"2", "1024"}
		if strings.HasPrefix(name, "BenchmarkRDMAAtomic") {
			want = []string{"8"}
		}
		assert.Equal(t, want, got[name], "%s under %s", name, v.name)
	}
	assert.Len(t, got, len(v.runs), "only the benchmarks the variant applies to report results")
	assert.NotContains(t, text, "--- FAIL")
	if t.Failed() {
		t.Logf("benchmark output:\n%s", text)
	}
	return text
}

// Every operation and variant runs as a benchmark in loopback mode.
func TestEveryVariantLoopback(t *testing.T) {
	testenv.MustHaveRDMA(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			text := runVariant(t, v)
			assert.Contains(t, text, "rdmabench-mode: loopback\n")
		})
	}
}

// Every operation and variant runs as a benchmark in two-node mode against
// the peer's session code (package peer, what rdmapeer runs) on the second
// device: the client sends the operation, transport and events flag, the
// peer takes none of them from its own configuration.
func TestEveryVariantTwoNode(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	peerDev := testenv.MustHaveSecondDevice(t, c)
	cpus, err := env.DefaultCPUs()
	require.NoError(t, err)
	require.Len(t, cpus, 2, "a CPU for the initiator and one for the peer")
	srv := peer.New(peer.Config{
		Session: peer.ServeConfig{Device: peerDev, GIDIndex: -1},
		CPUs:    []int{cpus[1]},
		Logf:    func(string, ...any) {},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Shutdown()
		<-served
	}()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			before := srv.Stats().Sessions
			text := runVariant(t, v, env.VarPeer+"="+ln.Addr().String(), env.VarCPUs+"="+itoa(cpus[0]))
			assert.Contains(t, text, "rdmabench-mode: two-node\n")
			assert.Contains(t, text, "rdma-peer-device: "+peerDev+"\n")
			assert.GreaterOrEqual(t, srv.Stats().Sessions-before, len(v.runs), "a session per benchmark")
		})
	}
}
