package work

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildELF compiles testdata/elf.c into a shared object with the host's
// cc (stripped: -s) and returns its path.
func buildELF(t *testing.T, stripped bool) string {
	t.Helper()
	if os.Getenv("RDMABENCH_VM") == "1" {
		t.Skip("skipping in the VM: builds a shared object with the host's C compiler, which the guest lacks; runs on the host")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	so := filepath.Join(t.TempDir(), "librb.so")
	args := []string{"-O1", "-shared", "-fPIC", "-o", so, "testdata/elf.c"}
	if stripped {
		args = append(args, "-s")
	}
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s (the tests need a C compiler, as rxevm -insns does)", cc, args, err, out)
	}
	return so
}

// fileOffsets returns the file offset of each function symbol of so.
func fileOffsets(t *testing.T, so string) (map[string]uint64, *elf.Prog) {
	t.Helper()
	f, err := elf.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var text *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	off := map[string]uint64{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			off[s.Name] = s.Value - text.Vaddr + text.Off
		}
	}
	for _, n := range []string{"rb_alpha", "rb_beta", "rb_hidden"} {
		if _, ok := off[n]; !ok {
			t.Fatalf("%s has no %s", so, n)
		}
	}
	return off, text
}

const mapStart = 0x555500000000

// symbolizer reads the recorded kallsyms and a maps that maps so's
// executable segment at mapStart.
func symbolizer(t *testing.T, so string, text *elf.Prog) *Symbolizer {
	t.Helper()
	ks, err := os.Open("testdata/kallsyms.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	maps := fmt.Sprintf("%x-%x r--p 00000000 fe:01 11 %s\n%x-%x r-xp %08x fe:01 11 %s\n7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n7ffe00000000-7ffe00001000 rw-p 00000000 00:00 0\n",
		mapStart-0x1000, mapStart, so, mapStart, mapStart+0x10000, text.Off&^0xfff, so)
	opened := map[string]int{}
	s, err := NewSymbolizer(ks, strings.NewReader(maps), func(name string, start, end uint64) (io.ReaderAt, error) {
		opened[name]++
		if name == "[vdso]" {
			return nil, errors.New("no vDSO in a test")
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { f.Close() })
		return f, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if opened[so] > 1 {
			t.Errorf("%s opened %d times, want once", so, opened[so])
		}
	})
	return s
}

// addr is where the function at file offset off runs.
func addr(off uint64, text *elf.Prog) uint64 { return mapStart + off - text.Off&^0xfff }

func TestSymbolizer(t *testing.T) {
	so := buildELF(t, false)
	off, text := fileOffsets(t, so)
	s := symbolizer(t, so, text)
	for _, c := range []struct {
		addr     uint64
		obj, fun string
	}{
		{0, Unattributed, Unattributed},
		{0xffffffff81001010, "vmlinux", "do_syscall_64"},
		{0xffffffff81001200, "vmlinux", "__x64_sys_write"},
		{0xffffffff81001410, "vmlinux", "__x64_sys_write"}, // data symbols are not functions
		{0xffffffffc0a00010, "rdma_rxe", "rxe_requester"},
		{0xffffffffc0a01800, "rdma_rxe", "rxe_completer"},
		{0xffffffff80000000, "vmlinux", Unknown},
		{addr(off["rb_alpha"], text), "librb.so", "rb_alpha"},
		{addr(off["rb_alpha"], text) + 1, "librb.so", "rb_alpha"},
		{addr(off["rb_beta"], text) + 2, "librb.so", "rb_beta"},
		{addr(off["rb_hidden"], text), "librb.so", "rb_hidden"},
		{0x7ffd00000010, "[vdso]", "[vdso]+0x10"}, // its image unreadable: offset
		{0x7ffe00000010, Unknown, Unknown},        // not code
		{0x1000, Unknown, Unknown},
	} {
		obj, fun := s.Lookup(c.addr)
		if obj != c.obj || fun != c.fun {
			t.Errorf("Lookup(%#x) = %s %s, want %s %s", c.addr, obj, fun, c.obj, c.fun)
		}
	}
}

// A stripped object keeps its exported functions (the dynamic symbols);
// a static one reads as the file and the offset it starts at (from the
// unwinding table), wherever in it the address is.
func TestSymbolizerStripped(t *testing.T) {
	off, text := fileOffsets(t, buildELF(t, false))
	so := buildELF(t, true)
	s := symbolizer(t, so, text)
	if obj, fun := s.Lookup(addr(off["rb_alpha"], text)); obj != "librb.so" || fun != "rb_alpha" {
		t.Errorf("exported function in a stripped object: %s %s, want librb.so rb_alpha", obj, fun)
	}
	want := fmt.Sprintf("librb.so+%#x", off["rb_hidden"])
	for _, d := range []uint64{0, 1, 3} { // its start, and inside it
		if obj, fun := s.Lookup(addr(off["rb_hidden"], text) + d); obj != "librb.so" || fun != want {
			t.Errorf("static function in a stripped object, +%d: %s %s, want librb.so %s", d, obj, fun, want)
		}
	}
}

func TestSymbolizerHiddenKernel(t *testing.T) {
	ks := "0000000000000000 T _stext\n0000000000000000 T do_syscall_64\n"
	if _, err := NewSymbolizer(strings.NewReader(ks), strings.NewReader(""), nil); !errors.Is(err, ErrHiddenKernel) {
		t.Errorf("kallsyms without addresses: %v, want ErrHiddenKernel", err)
	}
	if _, err := NewSymbolizer(strings.NewReader("ffffffff81000000 T\n"), strings.NewReader(""), nil); err == nil {
		t.Error("a kallsyms line without a name was accepted")
	}
	if _, err := NewSymbolizer(strings.NewReader("ffffffff81000000 T x\n"), strings.NewReader("zz-1 r-xp 0 0 0 /x\n"), nil); err == nil {
		t.Error("a maps line with a bad range was accepted")
	}
}

// Attribute sums the recorded profile per function, per operation
// (figures derived by hand from testdata/profile-kernel.txt and the user
// lines below, over 10 operations).
func TestAttribute(t *testing.T) {
	so := buildELF(t, false)
	off, text := fileOffsets(t, so)
	s := symbolizer(t, so, text)
	b, err := os.ReadFile("testdata/profile-kernel.txt")
	if err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("%x 400 0 0 0\n%x 250 0 0 0\n%x 100 0 0 0\n%x 30 0 0 0\n3000 7 0 0 0\n",
		addr(off["rb_alpha"], text), addr(off["rb_alpha"], text)+4, addr(off["rb_beta"], text), addr(off["rb_hidden"], text))
	raw, err := ParseRawProfile(strings.NewReader(strings.Replace(string(b), "end\n", user+"end\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if raw.Windows != 10 || len(raw.Samples) != 13 {
		t.Fatalf("parsed %d windows, %d samples; want 10, 13", raw.Windows, len(raw.Samples))
	}
	p := Attribute(raw, 10, s)
	want := map[Func]float64{
		{SpaceUser, Unattributed, Unattributed}:          0.5,
		{SpaceKernel, "vmlinux", "do_syscall_64"}:        40,
		{SpaceKernelWait, "vmlinux", "do_syscall_64"}:    2,
		{SpaceKernel, "vmlinux", "__x64_sys_write"}:      5.2,
		{SpaceKernelOther, "vmlinux", "__x64_sys_write"}: 0.7,
		{SpaceKernel, "rdma_rxe", "rxe_requester"}:       100,
		{SpaceKernel, "rdma_rxe", "rxe_completer"}:       20,
		{SpaceKernel, "vmlinux", Unknown}:                0.9,
		{SpaceUser, "librb.so", "rb_alpha"}:              65,
		{SpaceUser, "librb.so", "rb_beta"}:               10,
		{SpaceUser, "librb.so", "rb_hidden"}:             3,
		{SpaceUser, Unknown, Unknown}:                    0.7,
	}
	if p.Ops != 10 || len(p.PerOp) != len(want) {
		t.Errorf("%d ops, %d functions: %v; want 10, %d", p.Ops, len(p.PerOp), p.PerOp, len(want))
	}
	for f, v := range want {
		if math.Abs(p.PerOp[f]-v) > 1e-9 {
			t.Errorf("%s: %v insns/op, want %v", f, p.PerOp[f], v)
		}
	}
	if got := p.Total(SpaceUser); math.Abs(got-79.2) > 1e-9 {
		t.Errorf("user total %v, want 79.2", got)
	}
	if got := p.Total(SpaceKernel); math.Abs(got-166.1) > 1e-9 {
		t.Errorf("kernel total %v, want 166.1", got)
	}
	if z := Attribute(raw, 0, s); len(z.PerOp) != 0 {
		t.Errorf("no operations: %v, want nothing", z.PerOp)
	}
}
