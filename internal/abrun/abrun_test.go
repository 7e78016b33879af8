package abrun

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/texttest"
	"github.com/rdmabench/rdmabench/internal/turn"
	"go.uber.org/goleak"
)

// The test binary doubles as a fake benchmark binary (os/exec's
// helper-process pattern): run through a link named fakeold.test or
// fakenew.test it prints one run of BenchmarkRDMAWrite in the testing
// package's format and appends its side to $FAKE_LOG. Its p50 is 10 us,
// times $FAKE_NEW_FACTOR on the new side, times a drift of 1% per run so
// far (the machine slowing down), times 1±$FAKE_NEW_NOISE alternating by
// pair on the new side.
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "fakeold.test", "fakenew.test":
		os.Exit(fakeBench(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(os.Args[0]), "fake"), ".test"), os.Args[1:]))
	}
	goleak.VerifyTestMain(m) // fails the run when a test leaves a goroutine behind
}

func fakeBench(side string, args []string) int {
	count := 0
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-test.count="); ok {
			count, _ = strconv.Atoi(v)
		}
	}
	if count < 1 || !contains(args, "-test.run=^$") {
		fmt.Fprintf(os.Stderr, "fake: want -test.count=N and -test.run=^$, got %q\n", args)
		return 1
	}
	if os.Getenv(turn.EnvFD) != "" {
		return fakeDuet(side, args)
	}
	logName := os.Getenv("FAKE_LOG")
	prev, _ := os.ReadFile(logName)
	n := strings.Count(string(prev), "\n") // runs before this one
	f, err := os.OpenFile(logName, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 1
	}
	fmt.Fprintf(f, "%s %s\n", side, os.Getenv("FAKE_SIDE_ENV"))
	f.Close()
	p50 := 10000 * (1 + 0.01*float64(n))
	if side == "new" {
		if v, err := strconv.ParseFloat(os.Getenv("FAKE_NEW_FACTOR"), 64); err == nil {
			p50 *= v
		}
		if v, err := strconv.ParseFloat(os.Getenv("FAKE_NEW_NOISE"), 64); err == nil {
			if (n/2)%2 == 0 {
				p50 *= 1 + v
			} else {
				p50 *= 1 - v
			}
		}
	}
	fmt.Printf("goos: linux\ngoarch: amd64\npkg: fake\nrdma-device: rxe0\n")
	if os.Getenv("FAKE_CONTENTION") != "" {
		fmt.Printf("# host-cpu-contention: 1.62x with all busy, p90 1.20x the median, worst 2.50x; CPUs 0-1\n# warning (host-cpu-contention): the VM's host CPUs ... slow each other down\n#   fix: ...\n")
	}
	// With $FAKE_WORK, work metrics too: kernel work times
	// $FAKE_NEW_KWORK on the new side, and 0.1% apart between runs.
	kwork := 28000.0
	if v, err := strconv.ParseFloat(os.Getenv("FAKE_NEW_KWORK"), 64); err == nil && side == "new" {
		kwork *= v
	}
	for i := range count {
		work := ""
		if os.Getenv("FAKE_WORK") != "" {
			work = fmt.Sprintf("\t827.2 user-insns/op\t%.0f kernel-work-insns/op", kwork*(1+0.001*float64(i)))
		}
		fmt.Printf("BenchmarkRDMAWrite/size=2-4\t1000\t%.0f ns/op\t%.0f min-ns\t%.0f p50-ns\t%.0f p99-ns%s\t0 B/op\t0 allocs/op\n",
			p50*1.1, p50*0.9, p50, p50*3, work)
	}
	fmt.Println("PASS")
	fmt.Fprintln(os.Stderr, "fake stderr line")
	return 0
}

func contains(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

// fakes links the fakes into a fresh directory and returns their paths.
func fakes(t *testing.T) (old, new, dir string) {
	t.Helper()
	dir = t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"fakeold.test", "fakenew.test"} {
		if err := os.Symlink(self, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("FAKE_LOG", filepath.Join(dir, "log"))
	return filepath.Join(dir, "fakeold.test"), filepath.Join(dir, "fakenew.test"), dir
}

// compare runs o on OLD and NEW, the last two of args; the others are
// the runner's and the gate's flags (Spec.Register, GateSpec.Register),
// as rdmaab takes them.
func compare(t *testing.T, o *Comparison, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	fs := flag.NewFlagSet("rdmaab", flag.ContinueOnError)
	o.Spec.Register(fs)
	o.Spec.Gate.Register(fs)
	if err := fs.Parse(args); err != nil || fs.NArg() != 2 {
		t.Fatalf("%q: %v (want flags, OLD, NEW)", args, err)
	}
	o.Sides = [2]string{fs.Arg(0), fs.Arg(1)}
	if err := o.Spec.Check(); err != nil {
		t.Fatal(err)
	}
	var so, se bytes.Buffer
	code = o.Run(t.Context(), &so, &se)
	return code, so.String(), se.String()
}

// local is a comparison on this machine, as rdmaab -where local -out out
// [-gate] makes it.
func local(out string, gate bool) *Comparison {
	return &Comparison{Where: "local", Pkg: ".", GateOn: gate, Spec: Spec{OutDir: out}}
}

func TestCompareLocalInterleaves(t *testing.T) {
	old, new, dir := fakes(t)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, false), "-duet=false", "-count", "4", "-bench", "RDMAWrite", "-old-env", "FAKE_SIDE_ENV=o", "-new-env", "FAKE_SIDE_ENV=n", old, new)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	log, _ := os.ReadFile(os.Getenv("FAKE_LOG"))
	// Pairs alternate their order; each side got its own environment.
	if want := "old o\nnew n\nnew n\nold o\nold o\nnew n\nnew n\nold o\n"; string(log) != want {
		t.Errorf("runs:\n%s\nwant\n%s", log, want)
	}
	order, _ := os.ReadFile(filepath.Join(out, "order.txt"))
	if want := "pair 1 old\npair 1 new\npair 2 new\npair 2 old\npair 3 old\npair 3 new\npair 4 new\npair 4 old\n"; string(order) != want {
		t.Errorf("order.txt:\n%s", order)
	}
	oldTxt, _ := os.ReadFile(filepath.Join(out, "old.txt"))
	if n := strings.Count(string(oldTxt), "BenchmarkRDMAWrite/size=2-4"); n != 4 {
		t.Errorf("old.txt has %d results, want 4:\n%s", n, oldTxt)
	}
	if !strings.Contains(string(oldTxt), "rdma-device: rxe0") {
		t.Errorf("old.txt lacks the config lines")
	}
	errLog, _ := os.ReadFile(filepath.Join(out, "new.log"))
	if strings.Count(string(errLog), "fake stderr line") != 4 {
		t.Errorf("new.log:\n%s", errLog)
	}
	texttest.ContainsAll(t, "stdout", stdout,
		"old: binary "+old, "new: binary "+new,
		// Old runs 1,4,5,8 and new 2,3,6,7 (0-based runs before: 0,3,4,7
		// and 1,2,5,6): the ratios are 1.01/1.00, 1.02/1.03, 1.05/1.04,
		// 1.06/1.07, median (1.0096+0.9903)/2 ~ 1.000.
		"BenchmarkRDMAWrite/size=2-4 p50-ns: new/old 1.000 [-Inf, +Inf] (±∞, 4 pairs)",
		"ran the 4 pairs asked for (-count 4)",
		"gate: UNDECIDED",
	)
	if strings.Contains(stdout, "note:") {
		t.Errorf("a note about CPU contention where the output warned of none:\n%s", stdout)
	}
	// Without -gate the verdict informs and the status is 0; with it, a
	// gate that cannot judge (4 pairs) is undecided, status 4.
	code, stdout, _ = compare(t, local(out, true), "-duet=false", "-count", "4", old, new)
	if code != ExitUndecided || !strings.Contains(stdout, "gate: UNDECIDED") {
		t.Errorf("-gate with 4 pairs: status %d\n%s", code, stdout)
	}
}

func TestCompareGate(t *testing.T) {
	old, new, dir := fakes(t)
	t.Setenv("FAKE_NEW_FACTOR", "1.10")
	t.Setenv("FAKE_CONTENTION", "1") // the runs warn that the host's CPUs slow each other
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, true), "-duet=false", "-count", "8", old, new)
	if code != ExitRegressed {
		t.Fatalf("status %d, want %d\n%s\n%s", code, ExitRegressed, stdout, stderr)
	}
	texttest.ContainsAll(t, "stdout", stdout, "FAIL RDMAWrite/size=2-4 p50-ns: old ", "worse, p=0.", "above the 5% threshold", "gate: FAIL: 2 of 2 metrics regressed",
		"note: warning (host-cpu-contention): the VM's host CPUs", "judge min (-metrics min-ns) and run 30 or more pairs")
	// The same files through the gate alone (rdmaab gate); a threshold of
	// 20% passes them.
	gate := func(g GateSpec) (int, string) {
		t.Helper()
		rule, err := g.Rule()
		if err != nil {
			t.Fatal(err)
		}
		wrule, err := g.WorkRule()
		if err != nil {
			t.Fatal(err)
		}
		var o, e bytes.Buffer
		code := Gate(&o, &e, filepath.Join(out, "old.txt"), filepath.Join(out, "new.txt"), "", rule, wrule, (&Spec{Pairs: 10, Method: "rank", Gate: g}).SequentialRule())
		return code, o.String() + e.String()
	}
	code, stdout = gate(GateSpec{Metrics: "p50-ns,p99-ns", Threshold: 0.05, Alpha: 0.05})
	if code != ExitRegressed {
		t.Errorf("gate: status %d\n%s", code, stdout)
	}
	code, stdout = gate(GateSpec{Metrics: "p50-ns", Threshold: 0.2, Alpha: 0.05})
	if code != 0 || !strings.Contains(stdout, "within the 20% threshold") || !strings.Contains(stdout, "gate: pass") {
		t.Errorf("gate -threshold 20%%: status %d\n%s", code, stdout)
	}
}

func TestRepetitionConverges(t *testing.T) {
	old, new, dir := fakes(t)
	t.Setenv("FAKE_NEW_FACTOR", "1.03")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, false), "-duet=false", "-count", "20", "-ci", "2%", "-metrics", "p50-ns", old, new)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	// The drift makes each ratio 1.03 x (1.00+-0.01) at most; six pairs
	// give a finite interval well within +-2%.
	if !strings.Contains(stdout, "stopped after 6 pairs: the 95% interval of every median new/old ratio of p50-ns is within ±2%") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "rdmaab: after 5 pairs: widest") {
		t.Errorf("no progress of the stop rule:\n%s", stderr)
	}
}

func TestRepetitionReachesMax(t *testing.T) {
	old, new, dir := fakes(t)
	t.Setenv("FAKE_NEW_NOISE", "0.2")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, false), "-duet=false", "-count", "7", "-ci", "2%", "-metrics", "p50-ns", old, new)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "stopped at the maximum of 7 pairs WITHOUT reaching ±2%") {
		t.Errorf("stdout:\n%s", stdout)
	}
	order, _ := os.ReadFile(filepath.Join(out, "order.txt"))
	if strings.Count(string(order), "\n") != 14 {
		t.Errorf("order.txt:\n%s", order)
	}
}

// A side that is nothing at all says what it may be.
func TestBadSide(t *testing.T) {
	old, _, _ := fakes(t)
	code, _, stderr := compare(t, local(t.TempDir(), false), old, "no-such-rev-or-file")
	if code != ExitFailed || !strings.Contains(stderr, "no file, no directory") { // with or without git on PATH (the VM has none)
		t.Errorf("bad side: status %d, %s", code, stderr)
	}
}
