package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestKernelFromDepends(t *testing.T) {
	out := "linux-image-amd64\n  Depends: linux-image-6.1.0-57-amd64\n"
	if got := kernelFromDepends([]byte(out)); got != "linux-image-6.1.0-57-amd64" {
		t.Errorf("got %q", got)
	}
	if got := kernelFromDepends([]byte("linux-image-amd64\n  Recommends: foo\n")); got != "" {
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
	m := parsePolicy([]byte(out))
	if m["libpci3"] != "1:3.9.0-4" || m["perftest"] != "4.5+0.17-1" || m["gone"] != "(none)" {
		t.Errorf("parsePolicy = %v", m)
	}
}

func TestDebFile(t *testing.T) {
	if got := debFile(debPackage{"libpci3", "1:3.9.0-4"}); got != "libpci3_1%3a3.9.0-4_amd64.deb" {
		t.Errorf("debFile = %q", got)
	}
}

func TestCacheKey(t *testing.T) {
	bb := filepath.Join(t.TempDir(), "busybox")
	os.WriteFile(bb, []byte("fake"), 0o755)
	a, err := cacheKey([]debPackage{{"perftest", "4.5"}}, bb)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cacheKey([]debPackage{{"perftest", "4.6"}}, bb)
	if a == b || len(a) != 16 {
		t.Errorf("keys %q and %q: want distinct 16-digit keys", a, b)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("RDMABENCH_VM_CACHE", "/x/y")
	if d, _ := defaultCacheDir(); d != "/x/y" {
		t.Errorf("with RDMABENCH_VM_CACHE: %q", d)
	}
	t.Setenv("RDMABENCH_VM_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/c")
	if d, _ := defaultCacheDir(); d != "/c/rdmabench/rxevm" {
		t.Errorf("with XDG_CACHE_HOME: %q", d)
	}
}

func TestLockCache(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l1, err := lockCache(ctx, dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if l2, err := lockCache(ctx2, dir, t.Logf); err == nil {
		l2.Close()
		t.Fatal("second lock taken while the first is held")
	}
	l1.Close()
	l3, err := lockCache(ctx, dir, t.Logf)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l3.Close()
}

func TestResolvedRoundTrip(t *testing.T) {
	pkgs := []debPackage{{"linux-image-6.1.0-57-amd64", "6.1.192-3"}}
	for _, n := range guestPackages {
		pkgs = append(pkgs, debPackage{n, "1:2.3-4"})
	}
	b := formatResolved(pkgs, "fp")
	got, ok := parseResolved(b, "fp")
	if !ok || len(got) != len(pkgs) || got[0] != pkgs[0] || got[len(got)-1] != pkgs[len(pkgs)-1] {
		t.Errorf("round trip: %v %v", got, ok)
	}
	if _, ok := parseResolved(b, "other"); ok {
		t.Error("accepted with a different fingerprint")
	}
	if _, ok := parseResolved(b[:len(b)-20], "fp"); ok {
		t.Error("accepted a truncated file")
	}
}
