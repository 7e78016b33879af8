package image

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/internal/vm/debcache"
)

func TestCacheKey(t *testing.T) {
	bb := filepath.Join(t.TempDir(), "busybox")
	os.WriteFile(bb, []byte("fake"), 0o755)
	a, err := cacheKey([]debcache.Package{{Name: "perftest", Version: "4.5"}}, bb)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cacheKey([]debcache.Package{{Name: "perftest", Version: "4.6"}}, bb)
	if a == b || len(a) != 16 {
		t.Errorf("keys %q and %q: want distinct 16-digit keys", a, b)
	}
}

func TestResolvedRoundTrip(t *testing.T) {
	pkgs := []debcache.Package{{Name: "linux-image-6.1.0-57-amd64", Version: "6.1.192-3"}}
	for _, n := range guestPackages {
		pkgs = append(pkgs, debcache.Package{Name: n, Version: "1:2.3-4"})
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
