package perftestcmp

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/work"
)

// TestWorkMethodOnPerftest checks the method make compare measures
// perftest by (docs/work.md#programs-without-markers), on perftest itself,
// in the VM under rxevm -insns (make test-vm runs it so; in the plain VM
// it checks that the work runs say why they cannot run). For ib_write_lat
// and ib_send_lat over RC at 2 B, runs of N and 2N operations at two N:
// the user figure must not move with N (it did for send, whose receives
// perftest stops reposting rx_depth before the end), every operation
// must make exactly the calls through the library its loop makes (a post
// and its completion per side, and a receive for send), and the library
// must find the peer's answer after every WRITE completion but the last of
// a run (and 1% stalled past a second on a loaded host), and kernel work
// (the kernel figure compared) must be counted and within 5% at both N.
func TestWorkMethodOnPerftest(t *testing.T) {
	if os.Getenv("RDMABENCH_VM") != "1" {
		t.Skip("needs soft-RoCE and perftest: runs in the VM (make test-vm)")
	}
	for _, p := range []string{"ib_write_lat", "ib_send_lat"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not in the VM: %v", p, err)
		}
	}
	cpus := runtime.NumCPU()
	c := &Config{Device: "rxe0", GIDIndex: 1, Inline: 0, Timeout: time.Minute, ServerAddr: "127.0.0.1", Port: 18515,
		CPUs: [2]int{max(cpus-2, 0), cpus - 1}, PinPerftest: true, WorkIters: 100,
		// rdmacompare's default: under load perftest at times cannot
		// estimate the CPU frequency and prints inf (ErrNoClock).
		Retries: 2}
	if os.Getenv(work.EnvPlugin) == "" {
		if err := c.workCanRun(); !errors.Is(err, work.ErrUnavailable) {
			t.Fatalf("outside rxevm -insns the work runs say %v, want ErrUnavailable", err)
		}
		return
	}
	if err := c.workCanRun(); err != nil {
		t.Fatal(err)
	}
	// As runWork does: the kernel's roles before any program runs, for
	// kernel work, the kernel figure compared.
	if err := work.Prepare(); err != nil {
		t.Fatalf("the kernel's roles: %v", err)
	}
	m, err := newMethod(c)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	outs := map[string][]byte{}
	save := func(name string, b []byte) { outs[name] = b }
	for _, k := range []struct {
		tool  *Tool
		n     [2]int // two -work-iters: for send, below and above perftest's 512 receives
		calls float64
	}{
		{tools[0], [2]int{100, 300}, 4}, // a post and its completion per side
		{tools[2], [2]int{100, 600}, 6}, // and a receive per side
	} {
		c.Tools = []*Tool{k.tool}
		if err := c.resolveToolPaths(); err != nil {
			t.Fatal(err)
		}
		var user, kwork [2]float64
		for i, n := range k.n {
			c.WorkIters = n
			r, err := m.measure(c, k.tool, "", "perftest", save, perftestOnce(t.Context(), c, k.tool, 2, "", save))
			if err != nil && !errors.Is(err, ErrLostWaits) { // lost waits: told below, with perftest's output
				t.Fatalf("%s, -work-iters %d: %v", k.tool.name, n, err)
			}
			t.Logf("%s 2 B, %d and %d operations: user %.1f, kernel work %.0f (all kernel parts %.0f) insns/op; %.2f calls/op, %d waits lost",
				k.tool.name, n, 2*n, r.User, r.KernelWork, r.AllKernel(), r.Calls, r.Lost)
			user[i], kwork[i] = r.User, r.KernelWork
			if r.Calls != k.calls {
				t.Errorf("%s, -work-iters %d: %.3f counted calls through the library per operation, want %v", k.tool.name, n, r.Calls, k.calls)
			}
			// The wait after the last write of a run finds no answer
			// (none follows it); more means the WRITE wait did not hold.
			if r.Lost > maxLostWaits(3*n) {
				for name, b := range outs {
					if strings.HasSuffix(name, "-client.txt") || strings.HasSuffix(name, "-server.txt") {
						t.Logf("%s:\n%s", name, b)
					}
				}
				t.Errorf("%s, -work-iters %d: %d waits found no answer in two runs, want at most %d (each run's last write, a stall now and then)", k.tool.name, n, r.Lost, maxLostWaits(3*n))
			}
			if r.User <= 0 || !r.HasKernelWork || r.KernelWork <= 0 {
				t.Errorf("%s: no work counted (user, kernel work): %+v", k.tool.name, r)
			}
		}
		// Kernel work follows the host's speed a little (a jiffy passed
		// between operations takes timers' slow paths): 0.2-0.9% apart
		// at these N in two boots on a host at load 12-20, where the
		// parts on all vCPUs moved from 24530 to 83632 (send).
		if math.Abs(kwork[1]/kwork[0]-1) > 0.05 {
			t.Errorf("%s: kernel work %.0f at -work-iters %d, %.0f at %d: more than 5%% apart",
				k.tool.name, kwork[0], k.n[0], kwork[1], k.n[1])
		}
		if math.Abs(user[1]/user[0]-1) > 0.01 {
			t.Errorf("%s: user work %.1f at -work-iters %d, %.1f at %d: the method's figure moves with the number of operations",
				k.tool.name, user[0], k.n[0], user[1], k.n[1])
		}
	}
}
