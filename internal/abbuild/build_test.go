package abbuild

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeGo puts a "go" first on PATH that writes an empty executable for
// go test -c -o BIN; with FAKEGO_PIDFILE set it first starts a child that
// sleeps (as the compiler would run) and waits for it.
func fakeGo(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
if [ -n "$FAKEGO_ENVFILE" ]; then echo "$GOTMPDIR" > "$FAKEGO_ENVFILE"; fi
if [ -n "$FAKEGO_PIDFILE" ]; then sleep 300 & echo $! > "$FAKEGO_PIDFILE.tmp"; mv "$FAKEGO_PIDFILE.tmp" "$FAKEGO_PIDFILE"; wait; fi
while [ $# -gt 0 ]; do
	if [ "$1" = -o ]; then shift; printf '#!/bin/sh\n' > "$1"; chmod +x "$1"; fi
	shift
done
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// gitRepo makes a throwaway repository with one commit and enters it.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("skipping: no git on PATH (inside the VM there is none; the host run covers this)")
	}
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"},
		{"commit", "-q", "--allow-empty", "-m", "one"},
	} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Chdir(repo)
	return repo
}

func worktrees(t *testing.T, repo string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(out), "worktree ")
}

// A branch named like a directory here is refused with what to type.
func TestSideAmbiguousPathAndRevision(t *testing.T) {
	repo := gitRepo(t)
	fakeGo(t)
	if out, err := exec.Command("git", "branch", "peer").CombinedOutput(); err != nil {
		t.Fatalf("git branch: %v %s", err, out)
	}
	os.Mkdir(filepath.Join(repo, "peer"), 0o755)
	var log bytes.Buffer
	b, err := NewBuilder(".", &log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	_, err = b.Side(ctx, "old", "peer")
	if err == nil || !strings.Contains(err.Error(), "write ./peer for the path, or refs/heads/peer for the revision") {
		t.Fatalf("side(peer) = %v, want a refusal saying ./peer or refs/heads/peer", err)
	}
	if s, err := b.Side(ctx, "old", "./peer"); err != nil || s.Desc != "working tree ./peer" {
		t.Errorf("side(./peer) = %+v, %v: want the directory", s, err)
	}
	if s, err := b.Side(ctx, "new", "refs/heads/peer"); err != nil || !strings.HasPrefix(s.Desc, "commit refs/heads/peer (") {
		t.Errorf("side(refs/heads/peer) = %+v, %v: want the revision", s, err)
	}
	b.Close()
	if n := worktrees(t, repo); n != 1 {
		t.Errorf("%d worktrees after Close, want 1", n)
	}
}

// A cancelled build kills the go command's children too, and returns.
func TestBuildKilledOnCancel(t *testing.T) {
	fakeGo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("FAKEGO_PIDFILE", pidFile)
	var log bytes.Buffer
	b, err := NewBuilder(".", &log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.build(ctx, "old", t.TempDir()); done <- err }()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fake build did not start its child")
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled build succeeded")
		}
	case <-time.After(10 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("build did not return within 10 s of the cancel")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the build's child outlived the cancel")
		}
	}
}

// The go command's work directory lies under the builder's swept
// directory: a SIGKILLed rdmaab's go-build* goes with the next sweep.
func TestBuildWorkDirSwept(t *testing.T) {
	fakeGo(t)
	envFile := filepath.Join(t.TempDir(), "env")
	t.Setenv("FAKEGO_ENVFILE", envFile)
	var log bytes.Buffer
	b, err := NewBuilder(".", &log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.build(t.Context(), "old", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	gotmp := strings.TrimSpace(string(got))
	if gotmp != filepath.Join(b.tmp, "gotmp") {
		t.Fatalf("GOTMPDIR=%q, want %s", gotmp, filepath.Join(b.tmp, "gotmp"))
	}
	if fi, err := os.Stat(gotmp); err != nil || !fi.IsDir() {
		t.Fatalf("GOTMPDIR %s: %v", gotmp, err)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// What a killed rdmaab left (its marked directory, its lock free, a
// registered worktree) is removed at the next start; a running rdmaab's
// directory and directories without the marker are not.
func TestSweepStale(t *testing.T) {
	repo := gitRepo(t)
	root := t.TempDir()
	mk := func(name string) (string, *os.File) {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := claimTmp(dir)
		if err != nil {
			t.Fatal(err)
		}
		return dir, f
	}
	stale, f := mk("rdmaab-111")
	b := &Builder{tmp: stale, owner: f}
	if err := b.recordRepo(repo); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(stale, "old-tree")
	if out, err := exec.Command("git", "-C", repo, "worktree", "add", "--detach", "--quiet", wt, "HEAD").CombinedOutput(); err != nil {
		t.Fatalf("worktree add: %v %s", err, out)
	}
	f.Close() // killed: the lock goes with the process
	live, lf := mk("rdmaab-222")
	defer lf.Close()
	foreign := filepath.Join(root, "rdmaab-333")
	os.MkdirAll(filepath.Join(foreign, "old-tree"), 0o755)
	forged := filepath.Join(root, "rdmaab-444")
	os.Mkdir(forged, 0o755)
	os.WriteFile(filepath.Join(forged, ownerFile), []byte("something else\n"), 0o644)

	if n := worktrees(t, repo); n != 2 {
		t.Fatalf("%d worktrees before the sweep, want 2", n)
	}
	var log bytes.Buffer
	sweepStale(root, &log)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("stale %s left", stale)
	}
	if n := worktrees(t, repo); n != 1 {
		t.Errorf("%d worktrees after the sweep, want 1", n)
	}
	for _, d := range []string{live, foreign, forged} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if !strings.Contains(log.String(), "removed "+stale+" and its worktrees") {
		t.Errorf("sweep said %q", log.String())
	}
}
