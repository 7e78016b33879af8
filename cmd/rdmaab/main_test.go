package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/internal/abrun"
)

// TestMain fails the run when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// compare runs the command line args as rdmaab does.
func compare(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = dispatch(t.Context(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"main"}, "want OLD and NEW"},
		{[]string{"a", "b", "-count", "3"}, "flags go before OLD NEW"},
		{[]string{"-count", "0", "a", "b"}, "-count 0"},
		{[]string{"-ci", "2%", "-count", "4", "a", "b"}, "-ci needs -count of at least 6"},
		{[]string{"-where", "moon", "a", "b"}, "want local, vm or auto"},
		{[]string{"-metrics", "p50 ns", "a", "b"}, "not a unit"},
		{[]string{"-threshold", "five", "a", "b"}, "want a percentage like 5%"},
		{[]string{"-old-env", "X", "a", "b"}, "want KEY=VALUE"},
		{[]string{"gate", "one.txt"}, "gate takes two files"},
		{[]string{"-boot-timeout", "-1s", "a", "b"}, "-boot-timeout -1s: want"},
	} {
		code, _, stderr := compare(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}

// rdmaab gives every boot 180 s to reach /init: rxevm's own 45 s default
// boots again and again on a host at load 20 or more.
func TestBootTimeoutDefault(t *testing.T) {
	o, err := parseCompare([]string{"old.test", "new.test"}, io.Discard)
	if err != nil || o.BootTimeout != 180*time.Second {
		t.Errorf("-boot-timeout by default: %v, %v; want 3m0s", o.BootTimeout, err)
	}
}

func TestBootsNeedTheVM(t *testing.T) {
	code, _, stderr := compare(t, "-where", "local", "-old-vmflags", "-smp 2", "old.test", "new.test")
	if code != exitUsage || !strings.Contains(stderr, "drop -where local") {
		t.Errorf("status %d: %s", code, stderr)
	}
}

// TestBuildFromGit compares two commits of a throwaway module: each is
// checked out in a temporary worktree and built, and the worktrees are
// gone afterwards.
func TestBuildFromGit(t *testing.T) {
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: no %s on PATH (inside the VM there is no toolchain; the host run covers this)", tool)
		}
	}
	repo := t.TempDir()
	gitRun := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bench := func(p50 int) string {
		return fmt.Sprintf("package lat\n\nimport \"testing\"\n\nfunc BenchmarkLat(b *testing.B) {\n\tfor b.Loop() {\n\t}\n\tb.ReportMetric(%d, \"p50-ns\")\n}\n", p50)
	}
	gitRun("init", "-q")
	write("go.mod", "module example.com/lat\n\ngo 1.26\n")
	write("lat/lat_test.go", bench(1000))
	gitRun("add", ".")
	gitRun("commit", "-qm", "one")
	write("lat/lat_test.go", bench(1200))
	gitRun("commit", "-qam", "two")

	t.Chdir(repo)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := compare(t, "-where", "local", "-pkg", "lat", "-count", "6", "-benchtime", "10x", "-gate", "-out", out, "HEAD~1", "HEAD")
	if code != abrun.ExitRegressed {
		t.Fatalf("status %d, want %d\n%s\n%s", code, abrun.ExitRegressed, stdout, stderr)
	}
	for _, s := range []string{"old: commit HEAD~1 (", "new: commit HEAD (", "FAIL Lat-", "+20.0% worse"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	wt, err := exec.Command("git", "worktree", "list").Output()
	if err != nil || strings.Count(string(wt), "\n") != 1 {
		t.Errorf("worktrees left behind (%v):\n%s", err, wt)
	}
	// The current working tree compares too, as a directory.
	code, stdout, stderr = compare(t, "-where", "local", "-pkg", "lat", "-count", "1", "-benchtime", "10x", "-out", out, "HEAD", ".")
	if code != 0 || !strings.Contains(stdout, "new: working tree .") || !strings.Contains(stdout, "no change") {
		t.Errorf("HEAD vs .: status %d\n%s\n%s", code, stdout, stderr)
	}
}
