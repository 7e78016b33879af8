package debcache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestKernelFromDepends(t *testing.T) {
	out := "linux-image-amd64\n  Depends: linux-image-6.1.0-57-amd64\n"
	if got := KernelFromDepends([]byte(out)); got != "linux-image-6.1.0-57-amd64" {
		t.Errorf("got %q", got)
	}
	if got := KernelFromDepends([]byte("linux-image-amd64\n  Recommends: foo\n")); got != "" {
		t.Errorf("got %q, want none", got)
	}
}

func TestParsePolicy(t *testing.T) {
	out := `libpci3:
  Installed: (none)
  Candidate: 1:3.9.0-4
  Version table:
     1:3.9.0-4 500
        500 http://deb.debian.org/debian bookworm/main amd64 Packages
perftest:
  Installed: (none)
  Candidate: 4.5+0.17-1
gone:
  Installed: (none)
  Candidate: (none)
`
	m := ParsePolicy([]byte(out))
	if m["libpci3"] != "1:3.9.0-4" || m["perftest"] != "4.5+0.17-1" || m["gone"] != "(none)" {
		t.Errorf("ParsePolicy = %v", m)
	}
}

func TestDebFile(t *testing.T) {
	if got := DebFile(Package{Name: "libpci3", Version: "1:3.9.0-4"}); got != "libpci3_1%3a3.9.0-4_amd64.deb" {
		t.Errorf("DebFile = %q", got)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("RDMABENCH_VM_CACHE", "/x/y")
	if d, _ := DefaultDir(); d != "/x/y" {
		t.Errorf("with RDMABENCH_VM_CACHE: %q", d)
	}
	t.Setenv("RDMABENCH_VM_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/c")
	if d, _ := DefaultDir(); d != "/c/rdmabench/rxevm" {
		t.Errorf("with XDG_CACHE_HOME: %q", d)
	}
}

func TestLockCache(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l1, err := Lock(ctx, dir, t.Logf, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if l2, err := Lock(ctx2, dir, t.Logf, t.Logf); err == nil {
		l2.Close()
		t.Fatal("second lock taken while the first is held")
	}
	l1.Close()
	l3, err := Lock(ctx, dir, t.Logf, t.Logf)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l3.Close()
}

// TestLockNotice: a wait on the cache lock is told to the user (the
// notice, shown without -v) after LockNotice, naming the holder's pid, in
// a line benchstat cannot take for a config line.
func TestLockNotice(t *testing.T) {
	dir := t.TempDir()
	l1, err := Lock(t.Context(), dir, t.Logf, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Close()
	old := LockNotice
	LockNotice = 300 * time.Millisecond
	defer func() { LockNotice = old }()
	var notices []string
	notice := func(format string, args ...any) { notices = append(notices, fmt.Sprintf(format, args...)) }
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if l2, err := Lock(ctx, dir, t.Logf, notice); err == nil {
		l2.Close()
		t.Fatal("second lock taken while the first is held")
	}
	want := fmt.Sprintf("rxevm is waiting for the VM cache lock %s, held by another rxevm (pid %d); it goes on when that one ends", filepath.Join(dir, "lock"), os.Getpid())
	if len(notices) != 1 || notices[0] != want {
		t.Fatalf("notices %q, want one: %q", notices, want)
	}
}
