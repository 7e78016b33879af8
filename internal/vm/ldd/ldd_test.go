package ldd

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestParseLdd(t *testing.T) {
	const one = `	linux-vdso.so.1 (0x00007ffd1c9e2000)
	libibverbs.so.1 => /cache/root/usr/lib/x86_64-linux-gnu/libibverbs.so.1 (0x00007f0a1a3c0000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0a1a1df000)
	libnl-3.so.200 => /lib/x86_64-linux-gnu/libnl-3.so.200 (0x00007f0a1a1bc000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f0a1a40e000)
	libmissing.so.9 => not found
`
	r := Parse([]byte(one), "prog")
	want := []Lib{
		{"libibverbs.so.1", "/cache/root/usr/lib/x86_64-linux-gnu/libibverbs.so.1"},
		{"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"},
		{"libnl-3.so.200", "/lib/x86_64-linux-gnu/libnl-3.so.200"},
		{"/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"},
	}
	if !slices.Equal(r.Libs, want) {
		t.Errorf("libs = %q\nwant %q", r.Libs, want)
	}
	if !slices.Equal(r.Missing, []string{"prog: libmissing.so.9"}) {
		t.Errorf("missing = %q", r.Missing)
	}

	const many = `/usr/bin/a:
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0a1a1df000)
/usr/bin/static:
	statically linked
/usr/bin/script:
	not a dynamic executable
/usr/bin/b:
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0a1a1df000)
	libgone.so => not found
`
	r = Parse([]byte(many), "")
	if len(r.Libs) != 1 || r.Libs[0].Name != "libc.so.6" {
		t.Errorf("libs = %q, want libc.so.6 once", r.Libs)
	}
	if !slices.Equal(r.Missing, []string{"/usr/bin/b: libgone.so"}) {
		t.Errorf("missing = %q", r.Missing)
	}
}

func TestGuestLibPath(t *testing.T) {
	for _, tt := range []struct {
		lib  Lib
		want string
	}{
		{Lib{"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"}, "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Lib{"libfoo.so.1", "/opt/foo/lib/libfoo.so.1.2"}, "/usr/lib/x86_64-linux-gnu/libfoo.so.1"},
		{Lib{"/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"}, "/lib64/ld-linux-x86-64.so.2"},
	} {
		if got := GuestPath(tt.lib); got != tt.want {
			t.Errorf("GuestPath(%v) = %q, want %q", tt.lib, got, tt.want)
		}
	}
}

// TestLddHost runs the real ldd on a dynamic executable of the host: the
// test binary when cgo linked it dynamically, else sh or ls. In the guest
// (go test -exec rxevm) there is no ldd and busybox is static: it skips.
func TestLddHost(t *testing.T) {
	var exe string
	candidates := []string{}
	if self, err := os.Executable(); err == nil {
		candidates = append(candidates, self)
	}
	for _, n := range []string{"sh", "ls"} {
		if p, err := exec.LookPath(n); err == nil {
			candidates = append(candidates, p)
		}
	}
	for _, c := range candidates {
		if IsDynamicELF(c) {
			exe = c
			break
		}
	}
	if exe == "" {
		t.Skipf("skipping: no dynamic executable among %q", candidates)
	}
	r, err := Run(context.Background(), "", []string{exe, "/nonexistent-script"})
	if err != nil {
		t.Skipf("skipping: ldd: %v", err)
	}
	var names []string
	for _, l := range r.Libs {
		names = append(names, l.Name)
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "libc.so") }) {
		t.Errorf("ldd %s: no libc in %q", exe, names)
	}
}

func TestIsDynamicELF(t *testing.T) {
	dir := t.TempDir()
	script := dir + "/s"
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	if IsDynamicELF(script) {
		t.Error("a shell script is not a dynamic ELF file")
	}
}
