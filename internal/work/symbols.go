package work

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A Symbolizer maps the guest addresses of a profile to functions: kernel
// addresses through /proc/kallsyms, user addresses through the measuring
// process's /proc/self/maps and the ELF symbol tables of the files mapped
// (a file's name and offset where it has none).
type Symbolizer struct {
	kernel []ksym
	maps   []mapping
	open   Opener
	elfs   map[string]*elfSyms // by mapping name
}

type ksym struct {
	addr         uint64
	name, module string
}

type mapping struct {
	start, end, off uint64
	name            string
}

// An Opener opens the ELF image a mapping holds: name is the mapping's
// path (or "[vdso]"), start and end its addresses in the process.
type Opener func(name string, start, end uint64) (io.ReaderAt, error)

// ErrHiddenKernel means /proc/kallsyms gives no addresses (not root, or
// kernel.kptr_restrict): kernel work cannot be attributed.
var ErrHiddenKernel = errors.New("/proc/kallsyms hides the kernel's addresses (read it as root, with kernel.kptr_restrict=0)")

// NewSymbolizer reads kallsyms and maps (the formats of /proc/kallsyms and
// /proc/PID/maps); open opens the mapped files' ELF images, once each, when
// an address first needs one.
func NewSymbolizer(kallsyms, maps io.Reader, open Opener) (*Symbolizer, error) {
	kernel, err := parseKallsyms(kallsyms)
	if err != nil {
		return nil, err
	}
	return newSymbolizer(kernel, maps, open, map[string]*elfSyms{})
}

// parseKallsyms returns kallsyms's functions in address order.
func parseKallsyms(kallsyms io.Reader) ([]ksym, error) {
	var kernel []ksym
	nonzero := false
	err := lines(kallsyms, maxSymbolLines, func(n int, line string) error {
		// ADDR TYPE NAME [\t[MODULE]]
		f := strings.Fields(line)
		if len(f) < 3 {
			return fmt.Errorf("kallsyms line %d: %q", n, trunc([]byte(line)))
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return fmt.Errorf("kallsyms line %d: %q", n, trunc([]byte(line)))
		}
		nonzero = nonzero || addr != 0
		if t := f[1]; t != "t" && t != "T" && t != "w" && t != "W" {
			return nil // data, not code
		}
		mod := "vmlinux"
		if len(f) > 3 {
			mod = strings.Trim(f[3], "[]")
		}
		kernel = append(kernel, ksym{addr, f[2], mod})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !nonzero {
		return nil, ErrHiddenKernel
	}
	sort.SliceStable(kernel, func(i, j int) bool { return kernel[i].addr < kernel[j].addr })
	return kernel, nil
}

// newSymbolizer reads maps; kernel is parseKallsyms's, and elfs holds the
// mapped files' symbols read so far, by name (filled as Lookup needs).
func newSymbolizer(kernel []ksym, maps io.Reader, open Opener, elfs map[string]*elfSyms) (*Symbolizer, error) {
	s := &Symbolizer{kernel: kernel, open: open, elfs: elfs}
	err := lines(maps, maxSymbolLines, func(n int, line string) error {
		// START-END PERMS OFFSET DEV INODE [PATH]
		f := strings.Fields(line)
		if len(f) < 5 {
			return fmt.Errorf("maps line %d: %q", n, trunc([]byte(line)))
		}
		if len(f) < 6 || !strings.Contains(f[1], "x") {
			return nil // anonymous, or not code
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || end <= start {
			return fmt.Errorf("maps line %d: %q", n, trunc([]byte(line)))
		}
		s.maps = append(s.maps, mapping{start, end, off, strings.Join(f[5:], " ")})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(s.maps, func(i, j int) bool { return s.maps[i].start < s.maps[j].start })
	return s, nil
}

// Names for what cannot be attributed.
const (
	Unattributed = "[unattributed]" // the plugin's table was full
	Unknown      = "[unknown]"      // no symbol, no mapping
)

// Lookup returns the object and function that hold addr.
func (s *Symbolizer) Lookup(addr uint64) (object, function string) {
	if addr == 0 {
		return Unattributed, Unattributed
	}
	if addr>>63 == 1 {
		i := sort.Search(len(s.kernel), func(i int) bool { return s.kernel[i].addr > addr }) - 1
		if i < 0 {
			return "vmlinux", Unknown
		}
		return s.kernel[i].module, s.kernel[i].name
	}
	i := sort.Search(len(s.maps), func(i int) bool { return s.maps[i].start > addr }) - 1
	if i < 0 || addr >= s.maps[i].end {
		return Unknown, Unknown
	}
	m := s.maps[i]
	object = filepath.Base(m.name)
	off := addr - m.start + m.off // offset in the file
	if e := s.elf(m); e != nil {
		if fn, ok := e.lookup(off); ok {
			return object, fn
		}
		// A function without a name: named by where it starts.
		if start, ok := e.start(off); ok {
			off = start
		}
	}
	return object, object + "+0x" + strconv.FormatUint(off, 16)
}

func (s *Symbolizer) elf(m mapping) *elfSyms {
	if e, ok := s.elfs[m.name]; ok {
		return e
	}
	var e *elfSyms
	if s.open != nil {
		if r, err := s.open(m.name, m.start, m.end); err == nil {
			e = readELFSyms(r)
		}
	}
	s.elfs[m.name] = e
	return e
}

// elfSyms are a file's functions by file offset: named ones, and the
// starts of all (from the unwinding table) for those without a name.
type elfSyms struct {
	funcs  []efunc
	starts []uint64
}

type efunc struct {
	off, size uint64
	name      string
}

// readELFSyms reads an ELF file's function symbols (the full table, else
// the dynamic one) and places them at their file offsets; nil when r is
// not ELF or has neither table.
func readELFSyms(r io.ReaderAt) *elfSyms {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	fileOff := func(va uint64) (uint64, bool) {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && va >= p.Vaddr && va < p.Vaddr+p.Filesz {
				return va - p.Vaddr + p.Off, true
			}
		}
		return 0, false
	}
	e := &elfSyms{}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) != elf.STT_FUNC || sym.Value == 0 {
			continue
		}
		if off, ok := fileOff(sym.Value); ok {
			e.funcs = append(e.funcs, efunc{off, sym.Size, sym.Name})
		}
	}
	for _, va := range fdeStarts(f) {
		if off, ok := fileOff(va); ok {
			e.starts = append(e.starts, off)
		}
	}
	if len(e.funcs) == 0 && len(e.starts) == 0 {
		return nil
	}
	sort.SliceStable(e.funcs, func(i, j int) bool { return e.funcs[i].off < e.funcs[j].off })
	return e
}

// start returns the start of the unnamed function holding file offset
// off, from the unwinding table.
func (e *elfSyms) start(off uint64) (uint64, bool) {
	i := sort.Search(len(e.starts), func(i int) bool { return e.starts[i] > off }) - 1
	if i < 0 {
		return 0, false
	}
	return e.starts[i], true
}

// lookup returns the function at file offset off: the last one starting
// at or before it, if off is inside it (or it has no size).
func (e *elfSyms) lookup(off uint64) (string, bool) {
	i := sort.Search(len(e.funcs), func(i int) bool { return e.funcs[i].off > off }) - 1
	if i < 0 {
		return "", false
	}
	f := e.funcs[i]
	if f.size != 0 && off >= f.off+f.size {
		return "", false
	}
	return f.name, true
}

// Attribute sums raw's counts per function and divides them by ops.
func Attribute(raw RawProfile, ops uint64, s *Symbolizer) Profile {
	p := Profile{Ops: ops, PerOp: map[Func]float64{}}
	if ops == 0 {
		return p
	}
	for _, x := range raw.Samples {
		obj, fn := s.Lookup(x.Addr)
		for sp, n := range x.N {
			if n != 0 {
				p.PerOp[Func{Space(sp), obj, fn}] += float64(n) / float64(ops)
			}
		}
	}
	return p
}
