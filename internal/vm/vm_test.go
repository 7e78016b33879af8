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
)

// TestVM boots the guest once (about 20 s under TCG) and checks the whole
// path: RDMA devices, environment, testdata, -include, -out and the exit
// status. It runs only with RDMABENCH_VM_TEST=1, and then fails (not skips)
// when QEMU or busybox is missing.
func TestVM(t *testing.T) {
	if os.Getenv("RDMABENCH_VM_TEST") != "1" {
		t.Skip("skipping: boots a VM; set RDMABENCH_VM_TEST=1 to run")
	}
	for _, tool := range []string{"qemu-system-x86_64", "busybox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("RDMABENCH_VM_TEST=1 but %s is missing: %v", tool, err)
		}
	}
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

// testConfig is the configuration rxevm's flags give by default.
func testConfig() *Config {
	return &Config{Accel: "auto", Attempts: 3, SMP: 4, Mem: 2048, Qemu: "qemu-system-x86_64",
		Pin: DefaultPin, Isolate: DefaultIsolate, Probe: true, Nodes: 1}
}
