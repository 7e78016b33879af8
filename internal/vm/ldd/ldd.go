// Package ldd finds the shared libraries that host ELF files need, with the
// host's ldd, so that a program built on the host runs in the guest with
// its dependencies (its "ldd closure").
package ldd

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
)

// GuestLibDir is where shared libraries taken from the host go in the guest:
// one flat directory on the dynamic loader's default search path.
const GuestLibDir = "/usr/lib/x86_64-linux-gnu"

// A Lib is one line of ldd output.
type Lib struct {
	Name string // soname as requested ("libc.so.6"), or the loader's path
	Path string // host path it resolved to; "" when not found
}

// A Result is the parsed output of ldd for one or more files.
type Result struct {
	Libs    []Lib    // resolved libraries, in order of first appearance
	Missing []string // "file: soname" for each library that was not found
}

// Parse parses the output of `ldd FILE...`. With more than one file,
// ldd prints a "FILE:" line before each file's libraries; single is the file
// name to report for missing libraries when there is only one.
func Parse(out []byte, single string) Result {
	var r Result
	seen := make(map[string]bool)
	cur := single
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		if line[0] != '\t' && line[0] != ' ' && strings.HasSuffix(line, ":") {
			cur = strings.TrimSuffix(line, ":")
			continue
		}
		line = strings.TrimSpace(line)
		if i := strings.LastIndex(line, " (0x"); i >= 0 {
			line = line[:i]
		}
		var lib Lib
		if name, target, ok := strings.Cut(line, " => "); ok {
			if target == "not found" {
				r.Missing = append(r.Missing, cur+": "+name)
				continue
			}
			lib = Lib{Name: name, Path: target}
		} else if strings.HasPrefix(line, "/") {
			lib = Lib{Name: line, Path: line} // the dynamic loader
		} else {
			continue // linux-vdso.so.1, "statically linked", "not a dynamic executable"
		}
		if lib.Path == "" || seen[lib.Name] {
			continue
		}
		seen[lib.Name] = true
		r.Libs = append(r.Libs, lib)
	}
	return r
}

// GuestPath is where lib goes in the guest: the dynamic loader keeps its
// absolute path (the path compiled into every executable), every other
// library goes by its soname into guestLibDir.
func GuestPath(lib Lib) string {
	if strings.HasPrefix(lib.Name, "/") {
		return lib.Name
	}
	return path.Join(GuestLibDir, lib.Name)
}

// IsDynamicELF reports whether the host file name is an ELF object with a
// program interpreter or a dynamic section (an executable or shared library
// that ldd can resolve).
func IsDynamicELF(name string) bool {
	f, err := elf.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_DYNAMIC || p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

// Run runs ldd on the dynamic ELF files among files, with libPath (may be
// empty) as LD_LIBRARY_PATH, and parses the result. It fails when a library
// cannot be found.
func Run(ctx context.Context, libPath string, files []string) (Result, error) {
	var elfs []string
	for _, f := range files {
		if IsDynamicELF(f) {
			elfs = append(elfs, f)
		}
	}
	if len(elfs) == 0 {
		return Result{}, nil
	}
	sort.Strings(elfs)
	var all Result
	// Batches keep the command line short.
	for len(elfs) > 0 {
		n := min(len(elfs), 200)
		batch := elfs[:n]
		elfs = elfs[n:]
		cmd := exec.CommandContext(ctx, "ldd", batch...)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libPath)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil && len(out) == 0 {
			return Result{}, fmt.Errorf("ldd %s: %v: %s (ldd comes with libc-bin)", strings.Join(batch, " "), err, stderr.Bytes())
		}
		single := ""
		if len(batch) == 1 {
			single = batch[0]
		}
		r := Parse(out, single)
		all.Libs = append(all.Libs, r.Libs...)
		all.Missing = append(all.Missing, r.Missing...)
	}
	if len(all.Missing) > 0 {
		return all, fmt.Errorf("shared libraries not found on the host (install the packages that provide them):\n\t%s",
			strings.Join(all.Missing, "\n\t"))
	}
	return all, nil
}
