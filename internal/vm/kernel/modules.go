package kernel

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// compressedSuffixes are the endings of compressed module files
// (CONFIG_MODULE_COMPRESS_*), which busybox's insmod cannot load.
var compressedSuffixes = []string{".ko.xz", ".ko.zst", ".ko.gz"}

// ModName turns a module file path or name into the kernel's module name:
// no directory, no .ko (compressed or not), underscores for dashes.
func ModName(p string) string {
	p = path.Base(p)
	for _, s := range compressedSuffixes {
		if strings.HasSuffix(p, s) {
			p = strings.TrimSuffix(p, s) + ".ko"
		}
	}
	p = strings.TrimSuffix(p, ".ko")
	return strings.ReplaceAll(p, "-", "_")
}

// isCompressed reports whether the module file f is compressed.
func isCompressed(f string) bool {
	for _, s := range compressedSuffixes {
		if strings.HasSuffix(f, s) {
			return true
		}
	}
	return false
}

// An Index knows where one kernel's modules are and what each needs: from
// modules.dep when depmod wrote one, else from the modules' own .modinfo.
type Index struct {
	file    map[string]string // module name -> file (relative to the modules directory)
	builtin map[string]bool   // names of modules built into the kernel
	deps    func(file string) ([]string, error)
}

// ParseModulesDep reads modules.dep ("file: dep dep...") and, when builtin
// is not nil, modules.builtin (one file per line).
func ParseModulesDep(dep, builtin io.Reader) (*Index, error) {
	deps := map[string][]string{}
	ix := &Index{file: map[string]string{}, builtin: map[string]bool{}}
	ix.deps = func(file string) ([]string, error) { return deps[file], nil }
	s := bufio.NewScanner(dep)
	for s.Scan() {
		file, rest, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		deps[file] = strings.Fields(rest)
		ix.file[ModName(file)] = file
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if err := ix.readBuiltin(builtin); err != nil {
		return nil, err
	}
	return ix, nil
}

// readBuiltin adds the names in modules.builtin (nil: none).
func (ix *Index) readBuiltin(builtin io.Reader) error {
	if builtin == nil {
		return nil
	}
	s := bufio.NewScanner(builtin)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" {
			ix.builtin[ModName(l)] = true
		}
	}
	return s.Err()
}

// Has reports whether module name is there, as a file or built in.
func (ix *Index) Has(name string) bool {
	name = ModName(name)
	_, ok := ix.file[name]
	return ok || ix.builtin[name]
}

// File returns the file of module name ("" when built in or absent).
func (ix *Index) File(name string) string { return ix.file[ModName(name)] }

// LoadOrder returns the module files to load, in an order that loads every
// module after the modules it needs, for the named modules (in the given
// order where dependencies allow). Built-in modules are skipped; modules
// that are neither built in nor present are an error naming them all, and
// so are compressed ones.
func (ix *Index) LoadOrder(names []string) ([]string, error) {
	var order []string
	done := map[string]bool{}
	var visit func(file string, stack []string) error
	visit = func(file string, stack []string) error {
		if done[file] {
			return nil
		}
		for _, s := range stack {
			if s == file {
				return fmt.Errorf("module dependency cycle: %s", strings.Join(append(stack, file), " -> "))
			}
		}
		deps, err := ix.deps(file)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, append(stack, file)); err != nil {
				return err
			}
		}
		done[file] = true
		order = append(order, file)
		return nil
	}
	var missing []string
	for _, n := range names {
		n = ModName(n)
		file, ok := ix.file[n]
		if !ok {
			if !ix.builtin[n] {
				missing = append(missing, n)
			}
			continue
		}
		if err := visit(file, nil); err != nil {
			return nil, err
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("kernel modules %s: neither a module file nor built in (modules.builtin)", strings.Join(missing, ", "))
	}
	var packed []string
	for _, f := range order {
		if isCompressed(f) {
			packed = append(packed, f)
		}
	}
	if len(packed) > 0 {
		return nil, fmt.Errorf("compressed kernel modules (%s): busybox insmod loads only plain .ko files; build the kernel with CONFIG_MODULE_COMPRESS_NONE=y or decompress them", strings.Join(packed, ", "))
	}
	return order, nil
}
