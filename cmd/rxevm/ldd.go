package main

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

// guestLibDir is where shared libraries taken from the host go in the guest:
// one flat directory on the dynamic loader's default search path.
const guestLibDir = "/usr/lib/x86_64-linux-gnu"

// A sharedLib is one line of ldd output.
type sharedLib struct {
	name string // soname as requested ("libc.so.6"), or the loader's path
	path string // host path it resolved to; "" when not found
}

// lddResult is the parsed output of ldd for one or more files.
type lddResult struct {
	libs    []sharedLib // resolved libraries, in order of first appearance
	missing []string    // "file: soname" for each library that was not found
}

// parseLdd parses the output of `ldd FILE...`. With more than one file,
// ldd prints a "FILE:" line before each file's libraries; single is the file
// name to report for missing libraries when there is only one.
func parseLdd(out []byte, single string) lddResult {
	var r lddResult
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
		var lib sharedLib
		if name, target, ok := strings.Cut(line, " => "); ok {
			if target == "not found" {
				r.missing = append(r.missing, cur+": "+name)
				continue
			}
			lib = sharedLib{name: name, path: target}
		} else if strings.HasPrefix(line, "/") {
			lib = sharedLib{name: line, path: line} // the dynamic loader
		} else {
			continue // linux-vdso.so.1, "statically linked", "not a dynamic executable"
		}
		if lib.path == "" || seen[lib.name] {
			continue
		}
		seen[lib.name] = true
		r.libs = append(r.libs, lib)
	}
	return r
}

// guestLibPath is where lib goes in the guest: the dynamic loader keeps its
// absolute path (the path compiled into every executable), every other
// library goes by its soname into guestLibDir.
func guestLibPath(lib sharedLib) string {
	if strings.HasPrefix(lib.name, "/") {
		return lib.name
	}
	return path.Join(guestLibDir, lib.name)
}

// isDynamicELF reports whether the host file name is an ELF object with a
// program interpreter or a dynamic section (an executable or shared library
// that ldd can resolve).
func isDynamicELF(name string) bool {
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

// ldd runs ldd on the dynamic ELF files among files, with libPath (may be
// empty) as LD_LIBRARY_PATH, and parses the result. It fails when a library
// cannot be found.
func ldd(ctx context.Context, libPath string, files []string) (lddResult, error) {
	var elfs []string
	for _, f := range files {
		if isDynamicELF(f) {
			elfs = append(elfs, f)
		}
	}
	if len(elfs) == 0 {
		return lddResult{}, nil
	}
	sort.Strings(elfs)
	var all lddResult
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
			return lddResult{}, fmt.Errorf("ldd %s: %v: %s (ldd comes with libc-bin)", strings.Join(batch, " "), err, stderr.Bytes())
		}
		single := ""
		if len(batch) == 1 {
			single = batch[0]
		}
		r := parseLdd(out, single)
		all.libs = append(all.libs, r.libs...)
		all.missing = append(all.missing, r.missing...)
	}
	if len(all.missing) > 0 {
		return all, fmt.Errorf("shared libraries not found on the host (install the packages that provide them):\n\t%s",
			strings.Join(all.missing, "\n\t"))
	}
	return all, nil
}
