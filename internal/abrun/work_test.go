package abrun

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/texttest"
	"github.com/rdmabench/rdmabench/internal/work"
)

// copyDir copies the recorded comparison src into a temporary directory
// (the gate writes work-diff.txt beside old.txt).
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// gateWork runs rdmaab gate's rule with the default -metrics on dir.
func gateWork(t *testing.T, dir string) (int, string, *VerdictFile) {
	t.Helper()
	var s Spec
	fs := flag.NewFlagSet("rdmaab", flag.ContinueOnError)
	s.Gate.Register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	s.Pairs, s.Method = 3, "rank"
	return runGate(t, &s, dir, filepath.Join(dir, VerdictFileName))
}

// TestGateOnWork judges a recorded rdmaab -work comparison (testdata/
// work-ab: BenchmarkRDMAWrite 2 B, 3 interleaved runs a side of 2000x in
// one boot of rxevm -insns, host load 13-15; new built with
// -DRB_EXTRA_INSNS=70; each side's first run's profiles, functions of 2
// insns/op or more): the work rule fails it on user work, time at 3 runs
// cannot decide and is not counted, and the diff names the function that
// grew. The same runs against themselves pass.
func TestGateOnWork(t *testing.T) {
	dir := copyDir(t, "testdata/work-ab")
	code, out, vf := gateWork(t, dir)
	if code != ExitRegressed {
		t.Errorf("status %d, want %d\n%s", code, ExitRegressed, out)
	}
	texttest.ContainsAll(t, "output", out,
		"FAIL RDMAWrite/size=2-4 user-insns/op: old 829.1 [829.1, 829.1] new 969.1 [969.1, 969.1]: +16.89% worse, above the 0.1% threshold, ranges apart\n",
		"ok   RDMAWrite/size=2-4 kernel-insns/op: old 28364.0 [28059.0, 28653.0] new 28504.0 [28464.0, 28522.0]: +0.49% worse, within the 5% threshold, ranges overlap\n",
		"gate: UNDECIDED: too few samples",
		"time: could not decide (status 4), not counted: work decided",
		"judged 2 metrics: 2 by work rule (threshold, runs apart)\n",
		"  BenchmarkRDMAWrite/size=2:\n    user         (test binary)    rb_write_ping +140.0 insns/op (+191.8%)\n",
	)
	diff, err := os.ReadFile(filepath.Join(dir, WorkDiffFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(diff), "BenchmarkRDMAWrite/size=2: old 1 runs, new 1 runs (mean insns/op per function)\nuser         total 828.1 -> 968.1 insns/op (+139.9, +16.90%)\n") { // the functions kept: 2 insns/op or more
		t.Errorf("%s:\n%s", WorkDiffFile, diff)
	}
	if vf.Outcome != "regressed" {
		t.Errorf("verdict.json outcome %q", vf.Outcome)
	}
	var work []MetricVerdict
	for _, m := range vf.Metrics {
		if m.JudgedBy == ByWork {
			work = append(work, m)
		}
	}
	if len(work) != 2 || !work[0].Regressed || work[0].Unit != "user-insns/op" || work[0].Level != 0.001 || work[1].Regressed || *work[1].Lo >= 1 {
		t.Errorf("verdict.json's work metrics: %+v", work)
	}

	// A/A: old against itself, profiles and all.
	aa := copyDir(t, "testdata/work-ab")
	b, err := os.ReadFile(filepath.Join(aa, "old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aa, "new.txt"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(aa, "work", "new"))
	if err := os.CopyFS(filepath.Join(aa, "work", "new"), os.DirFS(filepath.Join(aa, "work", "old"))); err != nil {
		t.Fatal(err)
	}
	code, out, _ = gateWork(t, aa)
	if code != abtest.ExitPass || !strings.Contains(out, "work: pass: no metric of 2 regressed") ||
		!strings.Contains(out, "  BenchmarkRDMAWrite/size=2: no function changed by 0.5 insns/op or more\n") {
		t.Errorf("A/A: status %d\n%s", code, out)
	}
}

// TestWorkThresholdsFlag: the flag's default is DefaultThresholds' table,
// and bad entries say what to type.
func TestWorkThresholdsFlag(t *testing.T) {
	var g GateSpec
	fs := flag.NewFlagSet("rdmaab", flag.ContinueOnError)
	g.Register(fs)
	if err := fs.Parse([]string{"-metrics", "p50-ns,user-insns/op"}); err != nil {
		t.Fatal(err)
	}
	if g.WorkThresholds != "kernel-insns/op=5%,kernel-work-insns/op=2%,user-insns/op=0.1%" {
		t.Errorf("default -work-thresholds %q", g.WorkThresholds)
	}
	r, err := g.WorkRule()
	if err != nil || len(r.Units) != 1 || r.Threshold("user-insns/op") != 0.001 || r.Threshold("kernel-insns/op") != 0.05 {
		t.Errorf("WorkRule %+v, %v", r, err)
	}
	tr, err := g.Rule()
	if err != nil || len(tr.Units) != 1 || tr.Units[0] != "p50-ns" {
		t.Errorf("Rule %+v, %v", tr, err)
	}
	for _, bad := range []string{"user-insns/op", "p50-ns=1%", "user-insns/op=0", "user-insns/op=x"} {
		g.WorkThresholds = bad
		if _, err := g.WorkRule(); err == nil || !strings.Contains(err.Error(), "want unit=PCT") {
			t.Errorf("-work-thresholds %q: %v", bad, err)
		}
	}
}

// A boot's process runs -boot-runs repetitions and leaves a profile of
// each in its run directory: the diff averages all of them (a probe run
// of fewer operations left out), not one.
func TestReadWorkProfilesRepetitions(t *testing.T) {
	dir := t.TempDir()
	for i, r := range []struct{ ops, rcv int }{{500, 500}, {500, 520}, {1, 9999}, {500, 510}} {
		d := filepath.Join(dir, "1", "_artifacts", "pkg", "BenchmarkX", fmt.Sprint("r", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p := fmt.Sprintf("rdmawork-profile 1 ops %d\n# insns/op\tspace\tobject\tfunction\n%d\tkernel-work\trdma_rxe\trxe_rcv\n", r.ops, r.rcv)
		if err := os.WriteFile(filepath.Join(d, profileArtifact), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := readWorkProfiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	ps := m["BenchmarkX"]
	mean := work.Mean(ps...).PerOp[work.Func{Space: work.SpaceKernelWork, Object: "rdma_rxe", Name: "rxe_rcv"}]
	if len(ps) != 3 || mean != 510 {
		t.Errorf("%d profiles, rxe_rcv's mean %v; want the 3 of 500 operations, mean 510", len(ps), mean)
	}
}
