package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/abtest"
)

// Each exit status, as a CI job reads it (abtest's table, documented in
// the package doc and the usage): the gate on recorded files (a duet's,
// testdata/selftimed, as in internal/abrun) and on files written here, and a
// comparison whose side cannot be built.
func TestExitStatuses(t *testing.T) {
	rec := filepath.Join("testdata", "selftimed") // a copy of internal/abrun's: the VM carries a package's own testdata only
	aa := t.TempDir()
	for _, c := range [][2]string{{"old.txt", "old.txt"}, {"old.txt", "new.txt"}, {"bursts.txt", "bursts.txt"}} {
		b, err := os.ReadFile(filepath.Join(rec, c[0]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(aa, c[1]), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	few := t.TempDir()
	for _, n := range []string{"old.txt", "new.txt"} {
		os.WriteFile(filepath.Join(few, n), []byte("BenchmarkX-4\t10\t100 ns/op\t90 p50-ns\nPASS\n"), 0o644)
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		name string
		args []string
		want int
		says string
	}{
		{"pass", []string{"gate", "-metrics", "p50-ns", filepath.Join(aa, "old.txt"), filepath.Join(aa, "new.txt")}, abtest.ExitPass, "paired: pass"},
		{"regressed", []string{"gate", "-metrics", "p50-ns", filepath.Join(rec, "old.txt"), filepath.Join(rec, "new.txt")}, abtest.ExitRegressed, "paired: FAIL"},
		{"usage", []string{"gate", "-alpha", "2", "a", "b"}, abtest.ExitUsage, ""},
		{"failed: a side cannot be built", []string{"-where", "local", "-out", out, "-gate", "no-such-side", "nor-this"}, abtest.ExitFailed, ""},
		{"failed: nothing gated", []string{"gate", "-metrics", "p77-ns", filepath.Join(few, "old.txt"), filepath.Join(few, "new.txt")}, abtest.ExitFailed, "gate: CANNOT JUDGE: no result on both sides"},
		{"undecided: one run a side", []string{"gate", "-metrics", "p50-ns", filepath.Join(few, "old.txt"), filepath.Join(few, "new.txt")}, abtest.ExitUndecided, "gate: UNDECIDED: too few samples"},
	} {
		code, stdout, stderr := compare(t, c.args...)
		if code != c.want || !strings.Contains(stdout, c.says) {
			t.Errorf("%s: status %d, want %d, and stdout with %q\n%s\n%s", c.name, code, c.want, c.says, stdout, stderr)
		}
	}
}
