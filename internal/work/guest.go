package work

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	ks, err := os.Open("/proc/kallsyms")
	if err != nil {
		return Profile{}, err
	}
	defer ks.Close()
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
	s, err := NewSymbolizer(ks, maps, open)
	if err != nil {
		return Profile{}, err
	}
	return Attribute(raw, ops, s), nil
}
