package debcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeApt puts apt-get and apt-cache on PATH: apt-get download writes
// body as each .deb; apt-cache show gives the index of a 1000-byte file.
func fakeApt(t *testing.T, body string) {
	t.Helper()
	full := strings.Repeat("d", 1000)
	sum := sha256.Sum256([]byte(full))
	dir := t.TempDir()
	aptGet := `#!/bin/sh
[ "$1" = download ] || exit 0
shift; shift
for p in "$@"; do printf '%s' "$FAKEAPT_BODY" > "${p%%=*}_1.0_amd64.deb"; done
`
	aptCache := fmt.Sprintf(`#!/bin/sh
[ "$1" = show ] || exit 1
shift; shift
for p in "$@"; do printf 'Package: %%s\nVersion: 1.0\nSize: 1000\nSHA256: %s\n\n' "${p%%%%=*}"; done
`, hex.EncodeToString(sum[:]))
	for name, script := range map[string]string{"apt-get": aptGet, "apt-cache": aptCache} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKEAPT_BODY", body)
}

// TestDownloadCutShort: a .deb shorter than apt's index says never gets
// its final name, so the next run downloads it again; a whole one does.
func TestDownloadCutShort(t *testing.T) {
	debDir := t.TempDir()
	pkgs := []Package{{Name: "libfoo", Version: "1.0"}}
	fakeApt(t, strings.Repeat("d", 600))
	err := Download(t.Context(), debDir, pkgs, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "libfoo_1.0_amd64.deb is 600 bytes, apt's index says 1000") {
		t.Fatalf("Download of a cut .deb: %v", err)
	}
	if _, err := os.Stat(filepath.Join(debDir, DebFile(pkgs[0]))); err == nil {
		t.Fatal("the cut .deb has its final name")
	}
	fakeApt(t, strings.Repeat("d", 1000))
	if err := Download(t.Context(), debDir, pkgs, t.Logf); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(debDir, DebFile(pkgs[0]))); err != nil || fi.Size() != 1000 {
		t.Fatalf("the whole .deb: %v", err)
	}
	ents, _ := os.ReadDir(debDir)
	if len(ents) != 1 {
		t.Errorf("debDir holds %d entries, want the .deb alone", len(ents))
	}
}

// TestDownloadSweepsPartial: a temporary directory of a killed download
// is removed by the next Download.
func TestDownloadSweepsPartial(t *testing.T) {
	debDir := t.TempDir()
	left := filepath.Join(debDir, partialPrefix+"123")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(left, "libfoo_1.0_amd64.deb"), []byte("half"), 0o644)
	if err := Download(t.Context(), debDir, nil, t.Logf); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); err == nil {
		t.Error("the partial download was left")
	}
}

func TestParseIndex(t *testing.T) {
	idx := parseIndex([]byte("Package: a\nVersion: 1:2\nSize: 12\nSHA256: ab\n\nPackage: b\nVersion: 1\n"))
	if len(idx) != 1 || idx[Package{Name: "a", Version: "1:2"}] != (indexEntry{12, "ab"}) {
		t.Errorf("got %v", idx)
	}
}
