package perftestcmp

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/texttest"
	"github.com/rdmabench/rdmabench/internal/work"
)

// A result line with the work metrics, as the benchmark writes it under
// rxevm -insns.
const workLine = "BenchmarkRDMAWrite/size=2-2\t500\t41000 ns/op\t829.2 user-insns/op\t28726 kernel-insns/op\t900 kernel-wait-insns/op\t12000 kernel-other-insns/op\n"

func TestParseBenchMetrics(t *testing.T) {
	r, err := ParseBench(strings.NewReader(workLine), "b.txt", tools[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Metrics[work.UnitUser] != 829.2 || r.Metrics[work.UnitKernel] != 28726 || r.Metrics["ns/op"] != 41000 {
		t.Errorf("metrics %v: want the line's values by unit as written", r.Metrics)
	}
}

func TestMarkerWork(t *testing.T) {
	rs := []*BenchResult{
		{Metrics: map[string]float64{work.UnitUser: 830, work.UnitKernel: 28700, work.UnitKernelWork: 28300}},
		{Metrics: map[string]float64{"ns/op": 1}},                                 // a run without a counter
		{Metrics: map[string]float64{work.UnitUser: 829, work.UnitKernel: 28900}}, // a plugin without the roles
		{Metrics: map[string]float64{work.UnitUser: 829, work.UnitKernel: 28800, work.UnitKernelWork: 28400}},
	}
	// medians of {830, 829, 829}, {28700, 28900, 28800} and of the two
	// runs with kernel work, {28300, 28400}
	if p, ok := markerWork(rs); !ok || p.User != 829 || p.Kernel != 28800 || !p.HasKernelWork || p.KernelWork != 28350 {
		t.Errorf("markerWork: %+v %v, want 829, 28800 and kernel work 28350", p, ok)
	}
	if p, ok := markerWork(rs[2:3]); !ok || p.HasKernelWork || !math.IsNaN(comparedKernel(p)) {
		t.Errorf("markerWork without kernel-work-insns/op: %+v, want no kernel work (compared: NaN)", p)
	}
	if _, ok := markerWork(rs[1:2]); ok {
		t.Error("markerWork found figures in a run without them")
	}
	if m := medianOf([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("medianOf even count: %v, want 2.5", m)
	}
}

func TestCheckWithin(t *testing.T) {
	w := WorkResult{Tool: tools[0], Size: 2, HasOurs: true, HasMarkers: true,
		Ours:    work.PerOp{User: 835, Kernel: 25000, KernelWait: 100, KernelOther: 200, KernelWork: 29000, HasKernelWork: true},
		Markers: work.PerOp{User: 829.2, Kernel: 28000, KernelWait: 126, KernelOther: 600, KernelWork: 28000, HasKernelWork: true}}
	// user +0.70%; kernel work 29000 against 28000, +3.57% (the plugin's
	// other kernel parts, which follow time, are not compared)
	if err := w.checkWithin(0.01, 0.04); err != nil {
		t.Errorf("within 1%% and 4%%: %v", err)
	}
	if err := w.checkWithin(0.01, 0.03); !errors.Is(err, ErrWorkCheck) || !strings.Contains(err.Error(), "kernel 29000.0 by the method, 28000.0") {
		t.Errorf("kernel +3.6%% against 3%%: %v, want ErrWorkCheck naming the kernel part", err)
	}
	if err := w.checkWithin(0.005, 0); !errors.Is(err, ErrWorkCheck) || !strings.Contains(err.Error(), "user") {
		t.Errorf("user +0.7%% against 0.5%%: %v, want ErrWorkCheck naming user", err)
	}
	if err := w.checkWithin(0, 0); err != nil {
		t.Errorf("no tolerance: %v, want no judgement", err)
	}
	// A kernel tolerance with no kernel work on one side fails: there is
	// nothing to judge it by.
	nokw := w
	nokw.Ours.HasKernelWork = false
	if err := nokw.checkWithin(0.01, 0.5); !errors.Is(err, ErrWorkCheck) || !strings.Contains(err.Error(), "kernel NaN by the method") {
		t.Errorf("no kernel work by the method: %v, want ErrWorkCheck", err)
	}
	if err := nokw.checkWithin(0.01, 0); err != nil {
		t.Errorf("no kernel work, no kernel tolerance: %v, want no judgement", err)
	}
	w.HasOurs = false
	if err := w.checkWithin(0.001, 0.001); err != nil {
		t.Errorf("no -work-bench: %v, want no judgement", err)
	}
}

// TestMarkerWorkKernelParts: the markers' kernel parts are each a median,
// and sum to the kernel's work on all vCPUs.
func TestMarkerWorkKernelParts(t *testing.T) {
	rs := []*BenchResult{}
	for _, k := range [][4]float64{{829, 28000, 100, 500}, {829, 28100, 300, 400}, {830, 27900, 200, 600}} {
		rs = append(rs, &BenchResult{Metrics: map[string]float64{work.UnitUser: k[0], work.UnitKernel: k[1],
			work.UnitKernelWait: k[2], work.UnitKernelOther: k[3]}})
	}
	p, ok := markerWork(rs)
	if !ok || p.AllKernel() != 28000+200+500 {
		t.Errorf("markers' kernel on all vCPUs %v (%+v), want 28700", p.AllKernel(), p)
	}
}

// TestWorkTimeout: a work run longer than -iters gets -timeout in
// proportion; a shorter one, or a Config without Iters, -timeout.
func TestWorkTimeout(t *testing.T) {
	c := &Config{Iters: 500, Timeout: 2 * time.Minute}
	for _, k := range []struct {
		ops  int
		want time.Duration
	}{
		{200, 2 * time.Minute},
		{500, 2 * time.Minute},
		{4000, 16 * time.Minute}, // 2 min x 4000/500
		{750, 3 * time.Minute},
	} {
		if got := c.workTimeout(k.ops); got != k.want {
			t.Errorf("workTimeout(%d) with -iters 500 -timeout 2m: %s, want %s", k.ops, got, k.want)
		}
	}
	c.Iters = 0
	if got := c.workTimeout(4000); got != 2*time.Minute {
		t.Errorf("workTimeout without Iters: %s, want -timeout", got)
	}
}

// TestPerftestRxDepth: the work runs of send over RC give perftest one
// -r, the same in both runs and at most the shorter's operations.
func TestPerftestRxDepth(t *testing.T) {
	c := &Config{Device: "rxe0", GIDIndex: 1, Iters: 200, Inline: 0, rxDepth: 200}
	got := strings.Join(perftestArgs(c, tools[2], 2, 18515), " ")
	if !strings.Contains(got, "-n 200 -p 18515 -r 200 ") {
		t.Errorf("args %q: want -r 200 after -n and -p", got)
	}
	c.rxDepth = 0
	if got := strings.Join(perftestArgs(c, tools[2], 2, 18515), " "); strings.Contains(got, "-r") {
		t.Errorf("args %q: -r without a depth set", got)
	}
}

func TestPrintWork(t *testing.T) {
	works := []WorkResult{
		{Tool: tools[0], Size: 2, HasOurs: true, HasMarkers: true,
			Perftest: work.PerOp{User: 772, Kernel: 28551, KernelWork: 27900, HasKernelWork: true},
			Ours:     work.PerOp{User: 835, Kernel: 29300, KernelWork: 28600, HasKernelWork: true},
			Markers:  work.PerOp{User: 829.2, Kernel: 28726, KernelWork: 28400, HasKernelWork: true}},
		{Tool: tools[0], Size: 4096, Err: errors.New("ours, 400 operations: boom")},
		// Ours by the method only, and no kernel work on perftest's side
		// (a plugin that did not know the kernel's roles).
		{Tool: tools[1], Size: 2, HasOurs: true,
			Perftest: work.PerOp{User: 310, Kernel: 20000},
			Ours:     work.PerOp{User: 424, Kernel: 21000, KernelWork: 30000, HasKernelWork: true}},
		// Markers from a counter without the kernel's roles.
		{Tool: tools[4], Size: 8, HasOurs: true, HasMarkers: true,
			Perftest: work.PerOp{User: 315, KernelWork: 14000, HasKernelWork: true},
			Ours:     work.PerOp{User: 467, KernelWork: 14280, HasKernelWork: true},
			Markers:  work.PerOp{User: 471.9}},
	}
	var b bytes.Buffer
	if err := PrintWork(&b, works, nil, 200); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	texttest.ContainsAll(t, "the work table", out,
		"ran for 200 and 400 operations",
		"kernel = kernel work (kernel-work-insns/op",
		// 835/772 = 1.0816 (user: ours by the method); 28400/27900 =
		// 1.0179 (kernel work: ours by the markers); 835/829.2-1 = +0.7%;
		// 28600/28400-1 = +0.7%
		"  write          2 |               772.0     835.0  1.082x     829.2   +0.7% |               27900     28600  1.018x     28400   +0.7%\n",
		"  write       4096 | error: ours, 400 operations: boom\n",
		// 424/310 = 1.3677; no kernel work of perftest's: no figure, no ratio
		"  read           2 |               310.0     424.0  1.368x         -       - |                   -     30000       -         -       -\n",
		"verdict work write size 2: ours costs 1.082x perftest's user instructions and 1.018x its kernel work per operation\n",
		// markers without kernel work: the method's, 14280/14000 = 1.02
		"  atomic         8 |               315.0     467.0  1.483x     471.9   -1.0% |               14000     14280  1.020x         -       -\n",
		"verdict work write size 4096: no figures (ours, 400 operations: boom)\n",
		"verdict work read size 2: ours costs 1.368x perftest's user instructions and - its kernel work per operation\n",
	)
	b.Reset()
	if err := PrintWork(&b, nil, errors.New("not in rxevm -insns"), 200); err != nil || b.String() != "\nwork: not counted: not in rxevm -insns\n" {
		t.Errorf("no work: %q %v", b.String(), err)
	}
}
