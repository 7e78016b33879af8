package work

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// ProfileFile is the plugin's profile beside its counts file (rxevm
// -insns loads the plugin with both; internal/vm/insns.ProfileFile).
const ProfileFile = "profile"

// ReadProfile reads the plugin's profile beside the counts file
// countsPath (the plugin writes it at each Read of the counter) and
// attributes it to the functions of this process and the kernel, per
// operation of ops. Call it in the process that ran the measured loops,
// with its libraries still mapped; kernel symbols need root.
func ReadProfile(countsPath string, ops uint64) (Profile, error) {
	f, err := os.Open(filepath.Join(filepath.Dir(countsPath), ProfileFile))
	if err != nil {
		return Profile{}, fmt.Errorf("the plugin's profile: %w (an rxevm from before profiles?)", err)
	}
	defer f.Close()
	raw, err := ParseRawProfile(io.LimitReader(f, int64(maxProfileLines)*maxLineBytes))
	if err != nil {
		return Profile{}, err
	}
	// The kernel's split by roles, from a plugin that writes it.
	if kf, err := os.Open(filepath.Join(filepath.Dir(countsPath), ProfileFile+"-kernel")); err == nil {
		kraw, err := ParseRawKernelProfile(io.LimitReader(kf, int64(maxProfileLines)*maxLineBytes))
		kf.Close()
		if err != nil {
			return Profile{}, err
		}
		raw.Merge(kraw)
	}
	procSymbols.Lock()
	defer procSymbols.Unlock()
	kernel, err := procSymbols.kallsyms()
	if err != nil {
		return Profile{}, err
	}
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return Profile{}, err
	}
	defer maps.Close()
	var files []io.Closer
	defer func() {
		for _, c := range files {
			c.Close()
		}
	}()
	open := func(name string, start, end uint64) (io.ReaderAt, error) {
		if name == "[vdso]" {
			// The vDSO's image is the mapping itself.
			mem, err := os.Open("/proc/self/mem")
			if err != nil {
				return nil, err
			}
			files = append(files, mem)
			return io.NewSectionReader(mem, int64(start), int64(end-start)), nil
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		return f, nil
	}
	s, err := newSymbolizer(kernel, maps, open, procSymbols.elfs)
	if err != nil {
		return Profile{}, err
	}
	return Attribute(raw, ops, s), nil
}

// procSymbols is what ReadProfile has read of this process's symbols, kept
// for the next run of the process (go test -count): the kernel's functions
// and each mapped file's ELF symbols. Under the plugin's instrumentation
// reading them again took most of the 15-20 s between a run's loop and its
// profile. kallsyms is read again when a module came or went
// (/proc/modules changed); a mapped file's symbols stay for the life of
// the process.
var procSymbols symbolCache

type symbolCache struct {
	sync.Mutex
	modules []byte // loadedModules when kernel was read
	kernel  []ksym
	elfs    map[string]*elfSyms // by mapping name
}

// kallsyms returns the kernel's functions, read again when the loaded
// modules changed. The caller holds c.
func (c *symbolCache) kallsyms() ([]ksym, error) {
	if c.elfs == nil {
		c.elfs = map[string]*elfSyms{}
	}
	mods := loadedModules()
	if c.kernel != nil && bytes.Equal(mods, c.modules) {
		return c.kernel, nil
	}
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kernel, err := parseKallsyms(f)
	if err != nil {
		return nil, err
	}
	c.modules, c.kernel = mods, kernel
	return kernel, nil
}

// loadedModules returns the names of the modules loaded, from /proc/modules
// (whose use counts change as processes open devices); nil without any.
func loadedModules() []byte {
	b, err := os.ReadFile("/proc/modules")
	if err != nil {
		return nil
	}
	var names []byte
	for line := range bytes.Lines(b) {
		name, _, _ := bytes.Cut(line, []byte(" "))
		names = append(append(names, name...), ' ')
	}
	return names
}
