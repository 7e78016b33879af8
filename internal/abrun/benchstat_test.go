package abrun

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchstatEnv gives a test a fresh user cache and a PATH with the go
// command only (no benchstat), and returns two result files; it skips
// where there is no go command (inside the VM).
func benchstatEnv(t *testing.T) (oldName, newName string) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: no go command to build benchstat with (a host test)")
	}
	// A test binary's build info lists no dependencies (rdmaab's does):
	// the version is this module's.
	v, err := exec.Command(goCmd, "list", "-m", "-f", "{{.Version}}", perfModule).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", perfModule, err)
	}
	saved := perfVersion
	perfVersion = func() string { return strings.TrimSpace(string(v)) }
	t.Cleanup(func() { perfVersion = saved })
	// The build cache stays where it is (under XDG_CACHE_HOME it would
	// move with it, and a cold one compiles the standard library).
	gocache, err := exec.Command(goCmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("PATH", filepath.Dir(goCmd))
	dir := t.TempDir()
	oldName, newName = filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")
	for name, v := range map[string]int{oldName: 10000, newName: 12000} {
		var b strings.Builder
		for i := range 6 {
			b.WriteString("BenchmarkX-4\t100\t" + strconv.Itoa(v+i) + " p50-ns\n")
		}
		os.WriteFile(name, []byte(b.String()), 0o644)
	}
	return oldName, newName
}

// rdmaab prints benchstat's table with nothing but the go command: the
// benchstat of the x/perf it was built with, built once into the user's
// cache, then run from there.
func TestBenchstatPinned(t *testing.T) {
	oldName, newName := benchstatEnv(t)
	for i, want := range []bool{true, false} {
		var out, progress bytes.Buffer
		start := time.Now()
		if err := benchstat(t.Context(), &out, &progress, oldName, newName); err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d: %s (a load figure)", i+1, time.Since(start))
		if built := strings.Contains(progress.String(), "building benchstat"); built != want {
			t.Errorf("run %d: built %v, want %v: %q", i+1, built, want, progress.String())
		}
		if s := out.String(); !strings.Contains(s, "p50-sec") || !strings.Contains(s, "+20.00%") {
			t.Errorf("run %d: not benchstat's table:\n%s", i+1, s)
		}
	}
	bin := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "rdmabench", "benchstat", perfVersion(), "benchstat")
	if _, err := os.Stat(bin); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(bin)); len(ents) != 1 {
		t.Errorf("%s holds %d entries, want benchstat alone", filepath.Dir(bin), len(ents))
	}
}

// Offline (no proxy) it is built from the module cache; with neither, the
// error says what failed and what to install.
func TestBenchstatOffline(t *testing.T) {
	oldName, newName := benchstatEnv(t)
	t.Setenv("GOPROXY", "off")
	var out, progress bytes.Buffer
	if err := benchstat(t.Context(), &out, &progress, oldName, newName); err != nil || !strings.Contains(out.String(), "p50-sec") {
		t.Errorf("offline with x/perf in the module cache: %v\n%s", err, out.String())
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-modcacherw")
	err := benchstat(t.Context(), &out, &progress, oldName, newName)
	if err == nil || !strings.Contains(err.Error(), "offline, from the module cache") || !strings.Contains(err.Error(), "go install golang.org/x/perf/cmd/benchstat@") {
		t.Errorf("offline, empty module cache: %v", err)
	}
}
