package work

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A report as the plugin writes it (report.c's report: fixed-width numbers).
const report = "rxevm-insns 1 user                 46500 kernel               1400700 kernel-wait                  3000 kernel-other                 20000 windows                   101\n"

func TestParseReport(t *testing.T) {
	c, w, err := ParseReport([]byte(report))
	if err != nil || c != (Counts{User: 46500, Kernel: 1400700, KernelWait: 3000, KernelOther: 20000}) || w != 101 {
		t.Fatalf("ParseReport: %+v windows %d, %v", c, w, err)
	}
	for _, bad := range []string{
		"",
		"rxevm-insns 1 user 1 kernel 2 windows 3",                      // no newline: a torn read
		"rxevm-insns 2 user 1 kernel 2 windows 3\n",                    // another version
		"rxevm-insns 1 user -1 kernel 2 windows 3\n",                   // not a count
		"rxevm-insns 1 user 1 kernel 2 windows\n",                      // short
		"rxevm-insns 1 kernel 1 user 2 windows 3\n",                    // fields swapped
		"rxevm-insns 1 user 99999999999999999999 kernel 2 windows 3\n", // over 64 bits
	} {
		if _, _, err := ParseReport([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseReport(%q): %v, want ErrMalformed", bad, err)
		}
	}
	_, _, err = ParseReport([]byte("rxevm-insns 2 user 1 kernel 2 windows 3\n"))
	if !strings.Contains(err.Error(), "different versions") {
		t.Errorf("version error %q does not say what differs", err)
	}
}

// A report of a plugin that knows the kernel's roles: a second line.
const reportRoles = report + "rxevm-insns-kernel 1 work                1500000 time                  25000 others                   1200 roles    16\n"

func TestParseReportKernelWork(t *testing.T) {
	c, w, err := ParseReport([]byte(reportRoles))
	want := Counts{User: 46500, Kernel: 1400700, KernelWait: 3000, KernelOther: 20000,
		KernelWork: 1500000, KernelTime: 25000, KernelOthers: 1200, RolesKnown: true}
	if err != nil || c != want || w != 101 {
		t.Fatalf("ParseReport: %+v windows %d, %v", c, w, err)
	}
	m := c.PerOp(100, "rxevm-plugin")
	if last := m[len(m)-1]; last != (Metric{15000, UnitKernelWork}) {
		t.Errorf("last metric %+v, want 15000 %s", last, UnitKernelWork)
	}
	// Without roles (kallsyms hidden) the split is there but means nothing:
	// no kernel-work-insns/op.
	c, _, err = ParseReport([]byte(report + "rxevm-insns-kernel 1 work 0 time 0 others 0 roles 0\n"))
	if err != nil || c.RolesKnown {
		t.Fatalf("roles 0: %+v %v", c, err)
	}
	for _, m := range c.PerOp(100, "rxevm-plugin") {
		if m.Unit == UnitKernelWork {
			t.Errorf("%s reported without roles", UnitKernelWork)
		}
	}
	for _, bad := range []string{
		report + "rxevm-insns-kernel 1 work 1 time 2",                    // torn
		report + "rxevm-insns-kernel 2 work 1 time 2 others 3 roles 4\n", // another version
		report + "rxevm-insns-kernel 1 time 1 work 2 others 3 roles 4\n", // swapped
		report + "rxevm-insns-kernel 1 work x time 2 others 3 roles 4\n", // not a count
		report + "garbage\n",
	} {
		if _, _, err := ParseReport([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseReport(%q): %v, want ErrMalformed", bad, err)
		}
	}
}

func FuzzParseReport(f *testing.F) {
	f.Add([]byte(report))
	f.Add([]byte(reportRoles))
	f.Add([]byte("rxevm-insns 1 user 0 kernel 0 kernel-wait 0 kernel-other 0 windows 0\n"))
	f.Add([]byte("rxevm-insns 1 user\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, w, err := ParseReport(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("error of %d bytes: input quoted unbounded", len(err.Error()))
			}
			return
		}
		// What parses reads back the same.
		line := "rxevm-insns 1 user " + u(c.User) + " kernel " + u(c.Kernel) + " kernel-wait " + u(c.KernelWait) +
			" kernel-other " + u(c.KernelOther) + " windows " + u(w) + "\n"
		if c.KernelWork|c.KernelTime|c.KernelOthers != 0 || c.RolesKnown {
			roles := "0"
			if c.RolesKnown {
				roles = "1"
			}
			line += "rxevm-insns-kernel 1 work " + u(c.KernelWork) + " time " + u(c.KernelTime) + " others " +
				u(c.KernelOthers) + " roles " + roles + "\n"
		}
		c2, w2, err := ParseReport([]byte(line))
		if err != nil || c2 != c || w2 != w {
			t.Fatalf("round trip of %q: %+v %d %v", line, c2, w2, err)
		}
	})
}

func u(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// On the host the markers are NOPs and no plugin rewrites the file: the
// counter reads what the file holds, and a report with no window since
// the reset is refused.
func TestPluginCounterReadsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counts")
	os.WriteFile(path, []byte(report), 0o644)
	c, err := OpenPlugin(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Source() != "rxevm-plugin" {
		t.Errorf("Source %q", c.Source())
	}
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	n, err := c.Read()
	if err != nil || n != (Counts{User: 46500, Kernel: 1400700, KernelWait: 3000, KernelOther: 20000}) {
		t.Errorf("Read: %+v, %v", n, err)
	}
	os.WriteFile(path, []byte(strings.Replace(report, "101\n", "  0\n", 1)), 0o644)
	if _, err := c.Read(); !errors.Is(err, ErrNoWindow) {
		t.Errorf("no window since the reset: %v, want ErrNoWindow", err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOpen(t *testing.T) {
	t.Setenv(EnvPlugin, filepath.Join(t.TempDir(), "missing"))
	if _, err := Open(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Open with $%s naming no file: %v, want ErrUnavailable", EnvPlugin, err)
	}
	bad := filepath.Join(t.TempDir(), "counts")
	os.WriteFile(bad, []byte("garbage\n"), 0o644)
	t.Setenv(EnvPlugin, bad)
	if _, err := Open(); !errors.Is(err, ErrMalformed) {
		t.Errorf("Open of a malformed file: %v, want ErrMalformed", err)
	}
	// Without the plugin: the PMU, or a reason. This host has no readable
	// PMU (FACTS.md); where one is, the counter must count.
	t.Setenv(EnvPlugin, "")
	c, err := Open()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "perf_event_open") {
			t.Errorf("Open without a source: %v, want ErrUnavailable saying why", err)
		}
		return
	}
	defer c.Close()
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 1000000 {
		x += i
	}
	n, err := c.Read()
	if err != nil || n.User < 1000000 {
		t.Errorf("perf counted %+v over a million-iteration loop (%d), %v", n, x, err)
	}
}

func TestPerOp(t *testing.T) {
	c := Counts{User: 4650, Kernel: 140070, KernelWait: 30, KernelOther: 500}
	got := c.PerOp(10, "rxevm-plugin")
	want := []Metric{{465, UnitUser}, {14007, UnitKernel}, {3, UnitKernelWait}, {50, UnitKernelOther}}
	if !slices.Equal(got, want) {
		t.Errorf("PerOp: %v, want %v", got, want)
	}
	if got := c.PerOp(10, "perf"); !slices.Equal(got, want[:2]) {
		t.Errorf("PerOp of a hardware count: %v, want %v", got, want[:2])
	}
	if got := c.PerOp(0, "perf"); got[0].Value != 0 || got[1].Value != 0 {
		t.Errorf("PerOp(0): %v", got)
	}
}
