package perftestcmp

import (
	"bytes"
	"errors"
	"strings"
	"testing"

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
		{Metrics: map[string]float64{work.UnitUser: 830, work.UnitKernel: 28700}},
		{Metrics: map[string]float64{"ns/op": 1}}, // a run without a counter
		{Metrics: map[string]float64{work.UnitUser: 829, work.UnitKernel: 28900}},
		{Metrics: map[string]float64{work.UnitUser: 829, work.UnitKernel: 28800}},
	}
	// medians of {830, 829, 829} and {28700, 28900, 28800}
	if p, ok := markerWork(rs); !ok || p.User != 829 || p.Kernel != 28800 {
		t.Errorf("markerWork: %+v %v, want 829 and 28800", p, ok)
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
		Ours:    work.PerOp{User: 835, Kernel: 29000, KernelWait: 100, KernelOther: 200},
		Markers: work.PerOp{User: 829.2, Kernel: 28000, KernelWait: 126, KernelOther: 600}}
	// user +0.70%; kernel 29000 against 28000, +3.57% (the parts on
	// other vCPUs and in waits are not compared)
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
			Perftest: work.PerOp{User: 772, Kernel: 28551},
			Ours:     work.PerOp{User: 835, Kernel: 29300},
			Markers:  work.PerOp{User: 829.2, Kernel: 28726}},
		{Tool: tools[0], Size: 4096, Err: errors.New("ours, 400 operations: boom")},
	}
	var b bytes.Buffer
	if err := PrintWork(&b, works, nil, 200); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"ran for 200 and 400 operations",
		// 835/772 = 1.0816; 29300/28551 = 1.0262; 835/829.2-1 = +0.7%; 29300/28726-1 = +2.0%
		"  write          2 |               772.0     835.0  1.082x     829.2   +0.7% |               28551     29300  1.026x     28726   +2.0%\n",
		"  write       4096 | error: ours, 400 operations: boom\n",
		"verdict work write size 2: ours costs 1.082x perftest's user instructions and 1.026x its kernel instructions per operation\n",
		"verdict work write size 4096: no figures (ours, 400 operations: boom)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the work table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := PrintWork(&b, nil, errors.New("not in rxevm -insns"), 200); err != nil || b.String() != "\nwork: not counted: not in rxevm -insns\n" {
		t.Errorf("no work: %q %v", b.String(), err)
	}
}
