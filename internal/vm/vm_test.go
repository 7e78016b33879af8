package vm

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/debcache"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
)

// TestVM boots the guest (about 20 s a boot under TCG): once the stock way,
// checking the whole path, and once with -kernel and -modules. It runs only
// with RDMABENCH_VM_TEST=1, and then fails (not skips) when QEMU or busybox
// is missing.
func TestVM(t *testing.T) {
	if os.Getenv("RDMABENCH_VM_TEST") != "1" {
		t.Skip("skipping: boots a VM; set RDMABENCH_VM_TEST=1 to run")
	}
	for _, tool := range []string{"qemu-system-x86_64", "busybox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("RDMABENCH_VM_TEST=1 but %s is missing: %v", tool, err)
		}
	}
	t.Run("stock", testStock)
	t.Run("user-kernel", testUserKernel)
}

// testStock checks the whole path: RDMA devices, environment, testdata,
// -include, -out and the exit status.
func testStock(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "probe.sh")
	os.WriteFile(script, []byte(`#!/bin/sh
ibv_devices
rdma link
echo "device=$RDMABENCH_DEVICE require=$RDMABENCH_REQUIRE vm=$RDMABENCH_VM extra=$RXEVM_TEST_EXTRA"
echo "pwd=$(pwd)"
cat testdata/guest.txt
cat "$INCLUDED"
echo "args=$*"
echo samples >"$RXEVM_OUT/result.txt"
echo "to stderr" >&2
exit 3
`), 0o755)
	included := filepath.Join(dir, "included.txt")
	os.WriteFile(included, []byte("included file\n"), 0o644)
	out := filepath.Join(dir, "out")
	cwd, _ := os.Getwd()

	c := testConfig()
	c.Env = []string{"RXEVM_TEST_EXTRA=yes", "INCLUDED=" + included}
	c.Includes = []string{included}
	c.OutDir = out
	c.Prog, c.Args = script, []string{"arg 1", "it's"}
	c.LogFile = filepath.Join(dir, "rxevm.log")
	t.Cleanup(func() { logProgress(t, c.LogFile) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := Run(ctx, c, &stdout, &stderr)
	t.Logf("run took %s; stderr:\n%s", time.Since(start), stderr.String())
	if code != 3 {
		t.Errorf("exit status %d, want 3", code)
	}
	got := stdout.String()
	for _, want := range []string{
		"rxe0", "rxe1",
		"link rxe0/1 state ACTIVE", "link rxe1/1 state ACTIVE",
		"device=rxe0 require=1 vm=1 extra=yes",
		"pwd=" + cwd + "\n",
		"testdata reached the guest\n",
		"included file\n",
		"args=arg 1 it's\n",
		"to stderr\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(got, "\r") || strings.Contains(got, "RXEVM-EXIT") || strings.Contains(got, "reboot:") {
		t.Errorf("output has CRs, the marker or kernel messages")
	}
	if t.Failed() {
		t.Logf("output:\n%s", got)
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.txt")); err != nil || string(b) != "samples\n" {
		t.Errorf("-out: result.txt = %q, %v", b, err)
	}
}

// testUserKernel boots with -kernel and -modules pointed at the cached
// Debian kernel and its linux-image .deb, as a user's own build would be,
// and checks the release the guest runs and its soft-RoCE devices.
func testUserKernel(t *testing.T) {
	cache, err := debcache.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(cache, "current"))
	if err != nil {
		t.Fatalf("no cached guest (the stock boot builds it): %v", err)
	}
	vmlinuz := filepath.Join(cache, strings.TrimSpace(string(key)), "vmlinuz")
	rel, err := kernel.Release(vmlinuz)
	if err != nil || rel == "" {
		t.Fatalf("release of %s: %q, %v", vmlinuz, rel, err)
	}
	debs, _ := filepath.Glob(filepath.Join(cache, "debs", "linux-image-"+rel+"_*.deb"))
	if len(debs) != 1 {
		t.Fatalf("the cache holds %d packages of kernel %s, want 1: %q", len(debs), rel, debs)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "uname.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"release=$(uname -r)\"\nrdma link\n"), 0o755)
	c := testConfig()
	c.Kernel, c.Modules = vmlinuz, debs[0]
	c.LogFile = filepath.Join(dir, "rxevm.log")
	t.Cleanup(func() { logProgress(t, c.LogFile) })
	c.Prog = script
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := Run(ctx, c, &stdout, &stderr); code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{"release=" + rel + "\n", "link rxe0/1 state ACTIVE", "link rxe1/1 state ACTIVE"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// The same release as the stock guest: the log shows which path ran.
	log, _ := os.ReadFile(c.LogFile)
	if want := "booting the user's kernel " + rel + " with modules " + rel + " from " + debs[0]; !strings.Contains(string(log), want) {
		t.Errorf("progress log lacks %q:\n%s", want, log)
	}
}

// logProgress shows rxevm's progress lines (boots, retries, timings),
// which it keeps out of a go test run's output unless asked.
func logProgress(t *testing.T, file string) {
	if b, err := os.ReadFile(file); err == nil {
		t.Logf("progress:\n%s", b)
	}
}

// testConfig is the configuration rxevm's flags give by default.
func testConfig() *Config {
	return &Config{Accel: "auto", Attempts: 3, SMP: 4, Mem: 2048, Qemu: "qemu-system-x86_64",
		Pin: DefaultPin, Isolate: DefaultIsolate, Probe: true, Nodes: 1}
}
