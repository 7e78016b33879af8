package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOwnProject is the user's path (docs/own-project.md): an outside
// module (testdata/ownproject, a replace to this tree) with a benchmark
// that takes turns (rdmalat.Measure) and one that times itself
// (latency.Recorder + latency.Report), two commits in a throwaway git
// repository, and rdmaab and rxevm built from this tree as go install
// would. It gates the change in the VM (the second commit sends 4096
// bytes where the first sent 64, and does 10x its own work: both fail),
// then the same commit against itself (a pass), and checks that
// benchstat's table is printed, from nothing in the module's go.mod.
// It boots the VM twice, so it runs only with RDMABENCH_VM_TEST=1 (make
// test-own, part of make test), and then fails, not skips, without git, go
// or QEMU.
func TestOwnProject(t *testing.T) {
	if os.Getenv("RDMABENCH_VM_TEST") != "1" {
		t.Skip("skipping: boots the VM twice; set RDMABENCH_VM_TEST=1 to run (make test-own)")
	}
	for _, tool := range []string{"git", "go", "qemu-system-x86_64"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("RDMABENCH_VM_TEST=1 but %s is missing: %v", tool, err)
		}
	}
	tree, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, c := range []string{"rdmaab", "rxevm"} {
		run(t, tree, "go", "build", "-o", filepath.Join(bin, c), "./cmd/"+c)
	}
	repo := ownProject(t, tree)
	rdmaab := func(out string, args ...string) (int, string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), filepath.Join(bin, "rdmaab"), append([]string{"-where", "vm", "-vmflags", "-boot-timeout 180s", "-bench", "MyPath", "-benchtime", "500x",
			"-count", "10", "-metrics", "p50-ns", "-gate", "-out", out}, args...)...)
		cmd.Dir = repo
		// -boot-timeout: on a loaded host the guest's first sign of life
		// may take longer than rxevm's default wait. Interrupted, rdmaab
		// stops its VM and cleans up.
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = time.Minute
		start := time.Now()
		b, err := cmd.CombinedOutput()
		t.Logf("rdmaab %s: %s; output:\n%s", strings.Join(args, " "), time.Since(start).Round(time.Second), b)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(b)
	}

	out := filepath.Join(t.TempDir(), "ab")
	code, got := rdmaab(out, "HEAD~1", "HEAD")
	if code != 1 {
		t.Errorf("the change: status %d, want 1 (regressed)", code)
	}
	for _, s := range []string{
		"│ ", "sec/op", // benchstat's table
		"FAIL BenchmarkMyPath/path=raw/size=64 p50-ns: different",
		"FAIL BenchmarkMyPath/path=mine/size=64-",
		"per duet pair (its runs' values: it takes no turns)",
		"judged 2 metrics: 1 by duet turns, 1 by duet pairs of runs",
		"paired: FAIL",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("the change: output lacks %q", s)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "verdict.json")); err != nil {
		t.Error(err)
	}

	code, got = rdmaab(filepath.Join(t.TempDir(), "aa"), "HEAD", "HEAD")
	if code != 0 || !strings.Contains(got, "paired: pass") || !strings.Contains(got, "sec/op") {
		t.Errorf("the same commit: status %d, want 0 and a pass", code)
	}
}

// ownProject makes the user's repository: testdata/ownproject in a
// module requiring this tree (replaced by its path), committed, then
// changed and committed again.
func ownProject(t *testing.T, tree string) string {
	t.Helper()
	repo := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "ownproject", "mybench_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(tree, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/mybench\n\ngo 1.26\n\nrequire github.com/rdmabench/rdmabench v0.0.0\n\nreplace github.com/rdmabench/rdmabench => " + tree + "\n"
	for name, b := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "mybench_test.go": src} {
		if err := os.WriteFile(filepath.Join(repo, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, repo, "go", "mod", "tidy")
	git := func(args ...string) {
		t.Helper()
		run(t, repo, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "mybench: the path as it was")
	changed := strings.NewReplacer("rawBytes  = 64", "rawBytes  = 4096", "ownWorkNS = 2000", "ownWorkNS = 20000").Replace(string(src))
	if changed == string(src) {
		t.Fatal("testdata/ownproject/mybench_test.go lacks the constants the change edits")
	}
	os.WriteFile(filepath.Join(repo, "mybench_test.go"), []byte(changed), 0o644)
	git("commit", "-qam", "mybench: 4096 bytes a message, 10x the work")
	return repo
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
}
