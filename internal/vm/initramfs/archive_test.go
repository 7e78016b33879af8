package initramfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// cpioEntry is one entry read back by readCpio.
type cpioEntry struct {
	name  string
	mode  uint32
	data  string
	rdev  [2]uint32
	nlink uint32
}

// readCpio parses a newc archive, checking the format as the kernel does.
func readCpio(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	align := func() {
		for off%4 != 0 {
			if b[off] != 0 {
				t.Fatalf("non-zero padding at %d", off)
			}
			off++
		}
	}
	for {
		if len(b)-off < 110 || string(b[off:off+6]) != "070701" {
			t.Fatalf("bad header at %d: %q", off, b[off:min(off+110, len(b))])
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return uint32(v)
		}
		mode, nlink, size := field(1), field(4), field(6)
		rdev := [2]uint32{field(9), field(10)}
		namesize := int(field(11))
		off += 110
		name := string(b[off : off+namesize-1])
		if b[off+namesize-1] != 0 {
			t.Fatalf("%s: name not NUL-terminated", name)
		}
		off += namesize
		align()
		data := string(b[off : off+int(size)])
		off += int(size)
		align()
		if name == cpioTrailer {
			if off != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-off)
			}
			return out
		}
		out = append(out, cpioEntry{name, mode, data, rdev, nlink})
	}
}

func TestCpioHeaderBytes(t *testing.T) {
	a := New()
	a.entries["x"] = &entry{mode: modeFile | 0o644, data: []byte("hi")}
	var buf bytes.Buffer
	if err := a.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	// ino 1, mode 0100644, uid, gid 0, nlink 1, mtime 0, size 2, dev 0:0,
	// rdev 0:0, namesize 2 ("x\0"), check 0; 110+2 bytes is 4-aligned,
	// then "hi" padded to 4.
	want := "070701" + "00000001" + "000081a4" + "00000000" + "00000000" + "00000001" +
		"00000000" + "00000002" + "00000000" + "00000000" + "00000000" + "00000000" +
		"00000002" + "00000000" + "x\x00" + "hi\x00\x00"
	if got := buf.String()[:len(want)]; got != want {
		t.Errorf("first entry:\n got %q\nwant %q", got, want)
	}
}

func TestCpioRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "tree", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "tree", "sub", "f"), []byte("12345"), 0o600)
	os.Symlink("sub/f", filepath.Join(dir, "tree", "link"))

	a := New()
	a.Dir("tmp", 0o1777)
	a.File("/etc/hosts", 0o644, []byte("127.0.0.1 localhost\n"))
	a.Symlink("/bin/sh", "busybox")
	a.CharDev("dev/console", 0o600, 5, 1)
	if err := a.HostFile("/rxevm/prog/prog", filepath.Join(dir, "prog")); err != nil {
		t.Fatal(err)
	}
	if err := a.HostTree("/work/tree", filepath.Join(dir, "tree"), nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	got := map[string]cpioEntry{}
	var order []string
	for _, e := range readCpio(t, buf.Bytes()) {
		got[e.name] = e
		order = append(order, e.name)
	}
	want := []struct {
		name string
		mode uint32
		data string
	}{
		{"tmp", modeDir | 0o1777, ""},
		{"etc", modeDir | 0o755, ""},
		{"etc/hosts", modeFile | 0o644, "127.0.0.1 localhost\n"},
		{"usr/bin/sh", modeSymlink | 0o777, "busybox"}, // /bin is /usr/bin in the guest
		{"dev/console", modeCharDev | 0o600, ""},
		{"rxevm/prog/prog", modeFile | 0o755, "#!/bin/sh\necho hi\n"},
		{"work/tree/sub/f", modeFile | 0o600, "12345"},
		{"work/tree/link", modeSymlink | 0o777, "sub/f"},
	}
	for _, w := range want {
		e, ok := got[w.name]
		if !ok {
			t.Errorf("%s missing; have %v", w.name, order)
			continue
		}
		if e.mode != w.mode || e.data != w.data {
			t.Errorf("%s: mode %o data %q, want %o %q", w.name, e.mode, e.data, w.mode, w.data)
		}
	}
	if c := got["dev/console"]; c.rdev != [2]uint32{5, 1} {
		t.Errorf("dev/console rdev %v, want 5:1", c.rdev)
	}
	// Every parent directory comes before what it holds.
	seen := map[string]bool{}
	for _, n := range order {
		if d := filepath.Dir(n); d != "." && !seen[d] {
			t.Errorf("%s comes before its directory %s", n, d)
		}
		seen[n] = true
	}
}

func TestGuestPath(t *testing.T) {
	for in, want := range map[string]string{
		"/bin/ip":               "usr/bin/ip",
		"sbin/rdma":             "usr/sbin/rdma",
		"/lib/modules/x/a.ko":   "usr/lib/modules/x/a.ko",
		"/lib64/ld-linux.so.2":  "usr/lib64/ld-linux.so.2",
		"/library/x":            "library/x",
		"/usr/bin/../bin/x":     "usr/bin/x",
		"/tmp/go-build1/b001/t": "tmp/go-build1/b001/t",
		"/":                     "",
	} {
		if got := GuestPath(in); got != want {
			t.Errorf("GuestPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// Concatenated archives are what the kernel unpacks: check that two written
// back to back parse as two complete archives.
func TestCpioConcatenates(t *testing.T) {
	var buf bytes.Buffer
	for i := range 2 {
		a := New()
		a.File(fmt.Sprintf("f%d", i), 0o644, []byte("odd"))
		if err := a.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		if buf.Len()%4 != 0 {
			t.Fatalf("archive %d ends at %d, not 4-aligned", i, buf.Len())
		}
	}
	b := buf.Bytes()
	first := bytes.Index(b, []byte(cpioTrailer))
	end := first + len(cpioTrailer) + 1
	for end%4 != 0 {
		end++
	}
	readCpio(t, b[:end])
	readCpio(t, b[end:])
}
