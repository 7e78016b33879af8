package abrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/texttest"
)

// fakeRxevm writes an rxevm stand-in that logs its command line, applies
// its -env flags, skips the others (each with its value) and runs the rest.
func fakeRxevm(t *testing.T, dir string) (bin, log string) {
	t.Helper()
	bin, log = filepath.Join(dir, "rxevm"), filepath.Join(dir, "rxevm.log")
	script := `#!/bin/sh
echo "$*" >>` + log + `
while [ $# -gt 0 ]; do
	case "$1" in
	-env) export "$2"; shift 2 ;;
	-insns | -*=*) shift ;;
	-*) shift 2 ;;
	*) break ;;
	esac
done
exec "$@"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

// boots is a gated comparison of two VM setups through the fake rxevm, as
// rdmaab -rxevm RXEVM -gate -boot-runs N -old-vmflags OLD -new-vmflags NEW
// -out OUT makes it.
func boots(rxevm, out string, runs int, oldFlags, newFlags string) *Comparison {
	return &Comparison{Where: "vm", Rxevm: rxevm, Pkg: ".", GateOn: true, SideVMFlags: [2]string{oldFlags, newFlags},
		Spec: Spec{OutDir: out, BootRuns: runs}}
}

func TestBootsFindChange(t *testing.T) {
	old, new, dir := fakes(t)
	rxevm, log := fakeRxevm(t, dir)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, boots(rxevm, out, 3, "-env FAKE_SIDE_ENV=kernel-a", "-env FAKE_NEW_FACTOR=1.05 -env FAKE_SIDE_ENV=kernel-b"),
		"-count", "10", "-metrics", "p50-ns", "-threshold", "1%", old, new)
	if code != ExitRegressed {
		t.Fatalf("status %d, want %d\n%s\n%s", code, ExitRegressed, stdout, stderr)
	}
	texttest.ContainsAll(t, "stdout", stdout,
		"ran as boots: each side's VM",
		"FAIL BenchmarkRDMAWrite/size=2-4 p50-ns: different: +5.0",
		"(signed-rank test, 9 rounds",
		"stopped after 9 boot pairs of at most 10 (-count)",
	)
	// One boot per side per pair, in ABBA order, each with its own flags
	// and three repetitions in one process.
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 18 {
		t.Fatalf("%d boots, want 18:\n%s", len(lines), b)
	}
	for i, l := range lines {
		wantNew := []bool{false, true, true, false}[i%4]
		if strings.Contains(l, "kernel-b") != wantNew || strings.Contains(l, "kernel-a") == wantNew || !strings.Contains(l, "-test.count=3") {
			t.Errorf("boot %d: %s", i+1, l)
		}
	}
	sideLog, _ := os.ReadFile(os.Getenv("FAKE_LOG"))
	if !strings.HasPrefix(string(sideLog), "old kernel-a\nnew kernel-b\nnew kernel-b\nold kernel-a\n") {
		t.Errorf("the sides' environments: %q", sideLog)
	}
	oldTxt, _ := os.ReadFile(filepath.Join(out, "old.txt"))
	if n := strings.Count(string(oldTxt), "BenchmarkRDMAWrite/size=2-4"); n != 27 {
		t.Errorf("old.txt holds %d results, want 9 boots x 3", n)
	}
}

func TestBootsSameSetupPasses(t *testing.T) {
	old, _, dir := fakes(t)
	rxevm, _ := fakeRxevm(t, dir)
	o := boots(rxevm, filepath.Join(dir, "out"), 1, "", "")
	o.Boots = true // the same setup on both sides, each in boots of its own
	code, stdout, stderr := compare(t, o, "-count", "12", "-metrics", "p50-ns", "-threshold", "5%", old, old)
	if code != 0 || !strings.Contains(stdout, "p50-ns: same") || !strings.Contains(stdout, "paired: pass") {
		t.Errorf("status %d\n%s\n%s", code, stdout, stderr)
	}
}

// Every gated unit gets a verdict in a comparison of boots, p99 too (a
// boot's median of it), not a note that it was left out.
func TestBootsJudgeEveryUnit(t *testing.T) {
	old, new, dir := fakes(t)
	rxevm, _ := fakeRxevm(t, dir)
	code, stdout, stderr := compare(t, boots(rxevm, filepath.Join(dir, "out"), 1, "", "-env FAKE_NEW_FACTOR=1.2"),
		"-count", "12", "-metrics", "p50-ns,p99-ns", "-threshold", "5%", old, new)
	if code != ExitRegressed {
		t.Errorf("status %d, want %d\n%s\n%s", code, ExitRegressed, stdout, stderr)
	}
	texttest.ContainsAll(t, "stdout", stdout, "FAIL BenchmarkRDMAWrite/size=2-4 p50-ns: different", "FAIL BenchmarkRDMAWrite/size=2-4 p99-ns: different", "judged 2 metrics: 2 by boot pairs")
	if strings.Contains(stdout, "not judged") {
		t.Errorf("a gated unit left unjudged:\n%s", stdout)
	}
}

// A comparison of boots gated on work alone (rdmaab -work -boots -metrics
// user-insns/op,kernel-work-insns/op) judges every boot's runs by the work
// rule: no time unit is recorded per boot, and every boot gets rxevm's
// -boot-timeout unless the VM flags give their own.
func TestBootsGateOnWorkAlone(t *testing.T) {
	for _, tc := range []struct {
		name, factor, vmflags, timeout string
		want                           int
	}{
		{"same", "1", "", "-boot-timeout 3m0s", 0},
		{"kernel-work-grew", "1.03", "-boot-timeout=5m", "-boot-timeout=5m", ExitRegressed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, new, dir := fakes(t)
			rxevm, log := fakeRxevm(t, dir)
			t.Setenv("FAKE_WORK", "1")
			o := boots(rxevm, filepath.Join(dir, "out"), 3, "", "-env FAKE_NEW_KWORK="+tc.factor)
			o.VMFlags, o.BootTimeout = tc.vmflags, 3*time.Minute
			code, stdout, stderr := compare(t, o, "-work", "-count", "1", "-metrics", "user-insns/op,kernel-work-insns/op", old, new)
			if code != tc.want {
				t.Fatalf("status %d, want %d\n%s\n%s", code, tc.want, stdout, stderr)
			}
			if !strings.Contains(stdout, "no time metric gated") {
				t.Errorf("stdout lacks why no pair was judged:\n%s", stdout)
			}
			b, _ := os.ReadFile(log)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != 2 {
				t.Fatalf("%d boots, want 2:\n%s", len(lines), b)
			}
			for _, l := range lines {
				if strings.Count(l, "-boot-timeout") != 1 || !strings.Contains(l, tc.timeout) {
					t.Errorf("boot without %q once: %s", tc.timeout, l)
				}
			}
		})
	}
}

// vmArgs puts rdmaab's -boot-timeout before the VM flags unless they give
// their own, in either spelling, for both sides' boot or one side's.
func TestVMArgsBootTimeout(t *testing.T) {
	for _, tc := range []struct {
		vmflags, newFlags string
		side              int
		want              string
	}{
		{"-smp 2", "", -1, "-boot-timeout 3m0s -smp 2"},
		{"-boot-timeout 60s -smp 2", "", -1, "-boot-timeout 60s -smp 2"},
		{"", "--boot-timeout=5m", 1, "--boot-timeout=5m"},
		{"", "--boot-timeout=5m", 0, "-boot-timeout 3m0s"},
		{"-env X=-boot-timeout", "", -1, "-boot-timeout 3m0s -env X=-boot-timeout"},
	} {
		o := &Comparison{VMFlags: tc.vmflags, SideVMFlags: [2]string{"", tc.newFlags}, BootTimeout: 3 * time.Minute}
		if got := strings.Join(o.vmArgs(tc.side), " "); got != tc.want {
			t.Errorf("-vmflags %q -new-vmflags %q, side %d: %q, want %q", tc.vmflags, tc.newFlags, tc.side, got, tc.want)
		}
	}
	if got := (&Comparison{VMFlags: "-smp 2"}).vmArgs(-1); strings.Join(got, " ") != "-smp 2" {
		t.Errorf("no -boot-timeout (0): %q, want rxevm's own default", got)
	}
}
