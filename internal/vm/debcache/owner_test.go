package debcache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mkTree creates files (names ending in / are directories) under dir.
func mkTree(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// A directory like /var/cache: pruning it removes nothing, and rxevm refuses
// to use it, writing nothing into it.
func TestPruneCacheLeavesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, "apt/archives/x.deb", "man/index.db", "other_1.0_amd64.deb", "0123456789abcdef/base.cpio")
	Prune(dir, "fedcba9876543210")
	PruneDebs(dir, nil)
	for _, n := range []string{"apt/archives/x.deb", "man/index.db", "other_1.0_amd64.deb", "0123456789abcdef/base.cpio"} {
		if !exists(filepath.Join(dir, n)) {
			t.Errorf("Prune removed %s from a directory without the marker", n)
		}
	}
	err := Claim(dir, t.Logf)
	if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "RDMABENCH_VM_CACHE") ||
		!strings.Contains(err.Error(), "apt") {
		t.Errorf("claimCache on a foreign directory: %v, want a refusal naming apt and RDMABENCH_VM_CACHE", err)
	}
	if exists(filepath.Join(dir, Marker)) {
		t.Error("claimCache wrote its marker into a foreign directory")
	}
}

// Even inside a marked cache only rxevm's own names are pruned.
func TestPruneCacheOnlyOwnNames(t *testing.T) {
	dir := t.TempDir()
	if err := Claim(dir, t.Logf); err != nil {
		t.Fatal(err)
	}
	keep := Package{Name: "perftest", Version: "4.5"}
	mkTree(t, dir, "apt/", "man/x", "other_1.0_amd64.deb", "0123456789abcdef/base.cpio",
		"1111111111111111.tmp/root/x", "fedcba9876543210/base.cpio",
		"debs/"+DebFile(keep), "debs/old_1.0_amd64.deb", "debs/notes.txt")
	Prune(dir, "fedcba9876543210")
	PruneDebs(dir, []Package{keep})
	for n, want := range map[string]bool{
		"apt": true, "man/x": true, "other_1.0_amd64.deb": true, "debs/notes.txt": true,
		"fedcba9876543210/base.cpio": true, "debs/" + DebFile(keep): true,
		"0123456789abcdef": false, "1111111111111111.tmp": false, "debs/old_1.0_amd64.deb": false,
	} {
		if got := exists(filepath.Join(dir, n)); got != want {
			t.Errorf("%s exists = %v after pruning, want %v", n, got, want)
		}
	}
}

// A cache made before the marker existed holds only rxevm's names: it is
// adopted, so that runs already using it keep working.
func TestClaimCacheAdoptsOwnCache(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, "0f6f493a5f9bac67/base.cpio", "current", "lock", "resolved", "kvm-unusable",
		"debs/perftest_4.5+0.17-1_amd64.deb", "debs/libpci3_1%3a3.9.0-4_amd64.deb")
	if err := Claim(dir, t.Logf); err != nil {
		t.Fatalf("claimCache on rxevm's own cache: %v", err)
	}
	if !IsCache(dir) {
		t.Fatal("no marker after adoption")
	}
	if fi, err := os.Stat(filepath.Join(dir, Marker)); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("marker: %v %v, want mode 0644", fi, err)
	}
	// debs/ holding something else makes the directory foreign.
	dir2 := t.TempDir()
	mkTree(t, dir2, "current", "debs/photo.jpg")
	if err := Claim(dir2, t.Logf); !errors.Is(err, ErrForeign) {
		t.Errorf("claimCache with debs/photo.jpg: %v, want a refusal", err)
	}
	// A missing directory is created and marked.
	dir3 := filepath.Join(t.TempDir(), "new", "cache")
	if err := Claim(dir3, t.Logf); err != nil || !IsCache(dir3) {
		t.Errorf("claimCache on a new directory: %v (marked %v)", err, IsCache(dir3))
	}
}

// A symlink planted at the marker's name is not followed: the directory is
// refused (the link is a foreign entry) and its target is untouched.
func TestClaimCacheSymlinkMarker(t *testing.T) {
	dir, victim := t.TempDir(), filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, Marker)); err != nil {
		t.Fatal(err)
	}
	if err := Claim(dir, t.Logf); !errors.Is(err, ErrForeign) {
		t.Errorf("claimCache with a symlinked marker: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("symlink target now holds %q", b)
	}
}

// lockCache, the way every run enters the cache, refuses a foreign directory
// and creates no lock file in it.
func TestLockCacheRefusesForeign(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, "apt/", "man/")
	if l, err := Lock(t.Context(), dir, t.Logf, t.Logf); err == nil {
		l.Close()
		t.Fatal("lockCache took a foreign directory")
	}
	if exists(filepath.Join(dir, "lock")) {
		t.Error("lockCache created a lock file in a foreign directory")
	}
}

// TestKilledWriteLeftovers: the temporary file of a write of current or
// resolved that was killed (they are written whole, then renamed) is one
// of rxevm's names, and Prune removes it.
func TestKilledWriteLeftovers(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"current", ".current.tmp-123", ".resolved.tmp-9"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Claim(dir, t.Logf); err != nil {
		t.Fatalf("Claim refused a cache with a killed write's leftovers: %v", err)
	}
	Prune(dir, "")
	for _, name := range []string{".current.tmp-123", ".resolved.tmp-9"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s left by Prune", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "current")); err != nil {
		t.Errorf("current removed: %v", err)
	}
}
