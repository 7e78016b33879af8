package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func write(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "work-profile.txt")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const oldProfile = "rdmawork-profile 1 ops 1000\n# insns/op\tspace\tobject\tfunction\n" +
	"14000\tkernel\trdma_rxe\trxe_requester\n465\tuser\trdmalat.test\twrite_ping\n" +
	"100\tuser\tlibibverbs.so.1.14.46.0\tibv_post_send\n9000\tkernel-other\tvmlinux\tdefault_idle\n"

const newProfile = "rdmawork-profile 1 ops 1000\n# insns/op\tspace\tobject\tfunction\n" +
	"14312\tkernel\trdma_rxe\trxe_requester\n465.2\tuser\trdmalat.test\twrite_ping\n" +
	"100\tuser\tlibibverbs.so.1.14.46.0\tibv_post_send\n1000\tkernel-other\tvmlinux\tdefault_idle\n"

func TestDiff(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"diff", write(t, oldProfile), write(t, newProfile)}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	want := "old: 1000 ops, new: 1000 ops\n" +
		"user         total 565.0 -> 565.2 insns/op (+0.2, +0.04%)\n" +
		"kernel       total 14000.0 -> 14312.0 insns/op (+312.0, +2.23%)\n" +
		"kernel       rdma_rxe         rxe_requester +312.0 insns/op (+2.2%)\n"
	if out.String() != want {
		t.Errorf("diff:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	run([]string{"diff", "-min", "0", "-n", "1", "-spaces", "kernel-other", write(t, oldProfile), write(t, newProfile)}, &out, &errb)
	if !strings.HasSuffix(out.String(), "default_idle -8000.0 insns/op (-88.9%)\n") || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("-n 1 -spaces kernel-other:\n%s", out.String())
	}
}

func TestUsage(t *testing.T) {
	good := write(t, oldProfile)
	bad := write(t, "goos: linux\nBenchmarkX 1 2 ns/op\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: rdmawork diff"},
		{[]string{"diff", good}, "usage: rdmawork diff"},
		{[]string{"diff", "-spaces", "system", good, good}, "unknown space \"system\""},
		{[]string{"diff", good, bad}, "want a work-profile.txt"},
		{[]string{"diff", good, filepath.Join(t.TempDir(), "missing")}, "no such file"},
	} {
		var out, errb bytes.Buffer
		if rc := run(c.args, &out, &errb); rc != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("rdmawork %q: rc %d, stderr %q; want 2 and %q", c.args, rc, errb.String(), c.want)
		}
	}
}
