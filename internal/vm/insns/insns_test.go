package insns

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Build compiles the plugin once and finds it in the cache after; the
// result is a shared object exporting what QEMU looks up.
func TestBuildCaches(t *testing.T) {
	if os.Getenv("RDMABENCH_VM") == "1" {
		t.Skip("skipping in the VM: builds the plugin with the host's C compiler, which the guest lacks; runs on the host")
	}
	dir := t.TempDir()
	var logs []string
	logf := func(f string, a ...any) { logs = append(logs, f) }
	so, err := Build(context.Background(), dir, logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 {
		t.Errorf("first build logged %q, want one line", logs)
	}
	b, err := os.ReadFile(so)
	if err != nil || !strings.HasPrefix(string(b), "\x7fELF") {
		t.Fatalf("%s is not an ELF object: %v", so, err)
	}
	for _, sym := range []string{"qemu_plugin_install", "qemu_plugin_version"} {
		if !strings.Contains(string(b), sym) {
			t.Errorf("%s lacks %s", so, sym)
		}
	}
	again, err := Build(context.Background(), dir, logf)
	if err != nil || again != so || len(logs) != 1 {
		t.Errorf("second build: %s %v (logs %q), want the cached %s", again, err, logs, so)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("cache holds %d entries, want the plugin alone (no build directory left)", len(ents))
	}
}

func TestBuildWithoutCompiler(t *testing.T) {
	t.Setenv("CC", "no-such-cc")
	_, err := Build(context.Background(), t.TempDir(), func(string, ...any) {})
	if err == nil || !strings.Contains(err.Error(), "apt-get install gcc") {
		t.Errorf("no compiler: %v, want what to install", err)
	}
}

func TestQemuArgs(t *testing.T) {
	got := QemuArgs("/c/p,1.so", "/tmp/a,b")
	want := []string{"-plugin", "/c/p,,1.so,out=" + filepath.Join("/tmp/a,,b", CountsFile) +
		",profile=" + filepath.Join("/tmp/a,,b", ProfileFile)}
	if !slices.Equal(got, want) {
		t.Errorf("QemuArgs: %q, want %q (commas doubled)", got, want)
	}
}

// BuildPreload compiles the LD_PRELOAD library; it exports the two
// libibverbs functions it wraps and needs nothing of libibverbs itself.
func TestBuildPreload(t *testing.T) {
	if os.Getenv("RDMABENCH_VM") == "1" {
		t.Skip("skipping in the VM: builds the library with the host's C compiler, which the guest lacks; runs on the host")
	}
	so, err := BuildPreload(context.Background(), t.TempDir(), func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			exported[s.Name] = true
		} else if strings.HasPrefix(s.Name, "ibv_") {
			t.Errorf("%s needs %s from libibverbs", so, s.Name)
		}
	}
	for _, want := range []string{"ibv_open_device", "ibv_close_device"} {
		if !exported[want] {
			t.Errorf("%s does not export %s", so, want)
		}
	}
	if filepath.Base(so) == filepath.Base(PreloadFile) {
		t.Errorf("the cached build %s is not named by its hash", so)
	}
}

// The plugin's held parts: a neighbour thread that runs hundreds of parts
// on the vCPU inside a poll (a descheduled responder) must not push the
// poll's own parts out of the profile to slot 0, and the next poll starts
// from an empty table (testdata/held.c drives the plugin's source).
func TestHeldParts(t *testing.T) {
	if os.Getenv("RDMABENCH_VM") == "1" {
		t.Skip("skipping in the VM: compiles the plugin's source with the host's C compiler, which the guest lacks; runs on the host")
	}
	exe := filepath.Join(t.TempDir(), "held")
	srcs, err := filepath.Glob("plugin/*.c")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("the plugin's files plugin/*.c: %v (found %d)", err, len(srcs))
	}
	args := append([]string{"-O2", "-Wall", "-o", exe, "testdata/held.c"}, srcs...)
	out, err := exec.Command(CC(), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", CC(), strings.Join(args, " "), err, out)
	}
	out, err = exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	const want = "own 9 slot0 0 total 300009 left 0\n"
	if string(out) != want {
		t.Errorf("held parts: %q, want %q (the poll's own part 3 times 3, nothing in slot 0, all 3 x 100,003 counted, the index empty after)", out, want)
	}
}

// The cache's hash covers every file of the build, headers included: a
// change to a header alone builds anew.
func TestBuildHashCoversHeaders(t *testing.T) {
	if os.Getenv("RDMABENCH_VM") == "1" {
		t.Skip("skipping in the VM: builds with the host's C compiler, which the guest lacks; runs on the host")
	}
	dir := t.TempDir()
	logf := func(string, ...any) {}
	src := fstest.MapFS{
		"src/f.c": {Data: []byte("#include \"f.h\"\nint f(void) { return F; }\n")},
		"src/f.h": {Data: []byte("#define F 1\n")},
	}
	first, err := build(context.Background(), dir, "f", src, "src", logf)
	if err != nil {
		t.Fatal(err)
	}
	src["src/f.h"] = &fstest.MapFile{Data: []byte("#define F 2\n")}
	second, err := build(context.Background(), dir, "f", src, "src", logf)
	if err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Errorf("a changed header built into the same cached %s", first)
	}
}
