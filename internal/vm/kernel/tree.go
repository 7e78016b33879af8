package kernel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The module every rxevm guest needs: soft-RoCE.
const rxeModule = "rdma_rxe"

// Modules is one kernel's modules directory, lib/modules/<release>.
type Modules struct {
	Dir     string // the lib/modules/<release> directory
	Release string // the release the modules were built for
	*Index
}

// OpenModules opens the modules of one kernel at path: a lib/modules/<release>
// directory, a directory holding lib/modules/<release> (what make
// modules_install INSTALL_MOD_PATH=DIR or dpkg -x writes) or one holding a
// single <release> directory (like /lib/modules). The release is the one
// rdma_rxe.ko was built for (its vermagic), else the directory's name. It
// fails, saying what to give instead, when there is no rdma_rxe (as a
// module or built in).
func OpenModules(path string) (*Modules, error) {
	dir, err := findRelease(path)
	if err != nil {
		return nil, err
	}
	m := &Modules{Dir: dir, Release: filepath.Base(dir)}
	if m.Index, err = openIndex(dir); err != nil {
		return nil, err
	}
	if !m.Has(rxeModule) {
		return nil, fmt.Errorf("%s holds no %s.ko and modules.builtin does not list it: "+
			"build the kernel with CONFIG_RDMA_RXE=m (or =y) and give its installed modules "+
			"(make modules_install INSTALL_MOD_PATH=DIR, then DIR) or its linux-image .deb", dir, rxeModule)
	}
	if f := m.File(rxeModule); f != "" && !isCompressed(f) {
		info, err := ReadModinfo(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		if r := info.Release(); r != "" {
			m.Release = r
		}
	}
	return m, nil
}

// isReleaseDir reports whether dir looks like lib/modules/<release>.
func isReleaseDir(dir string) bool {
	for _, n := range []string{"modules.dep", "modules.order", "modules.builtin", "kernel"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// findRelease finds the lib/modules/<release> directory at or under path.
func findRelease(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: not a directory: give a lib/modules/<release> directory or a linux-image .deb", path)
	}
	if lm := filepath.Join(path, "lib", "modules"); isDir(lm) {
		path = lm
	}
	if isReleaseDir(path) {
		return path, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return "", err
	}
	var rels []string
	for _, e := range ents {
		if e.IsDir() && isReleaseDir(filepath.Join(path, e.Name())) {
			rels = append(rels, e.Name())
		}
	}
	switch len(rels) {
	case 1:
		return filepath.Join(path, rels[0]), nil
	case 0:
		return "", fmt.Errorf("%s holds no kernel modules: give a lib/modules/<release> directory "+
			"(make modules_install INSTALL_MOD_PATH=DIR installs one under DIR) or a linux-image .deb", path)
	}
	return "", fmt.Errorf("%s holds the modules of %d kernels (%s): give one of them, e.g. %s",
		path, len(rels), strings.Join(rels, ", "), filepath.Join(path, rels[0]))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// openIndex reads dir's modules.dep and modules.builtin, or, without a
// modules.dep (Debian's packages ship none; depmod makes it), finds the
// module files and reads what each needs from its .modinfo when asked.
func openIndex(dir string) (*Index, error) {
	var builtin *os.File
	if f, err := os.Open(filepath.Join(dir, "modules.builtin")); err == nil {
		builtin = f
		defer f.Close()
	}
	dep, err := os.Open(filepath.Join(dir, "modules.dep"))
	switch {
	case err == nil:
		defer dep.Close()
		if builtin == nil {
			return ParseModulesDep(dep, nil)
		}
		return ParseModulesDep(dep, builtin)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	ix := &Index{file: map[string]string{}, builtin: map[string]bool{}}
	if builtin != nil {
		if err := ix.readBuiltin(builtin); err != nil {
			return nil, err
		}
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".ko") || isCompressed(p)) {
			rel, _ := filepath.Rel(dir, p)
			ix.file[ModName(rel)] = filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ix.deps = func(file string) ([]string, error) {
		if isCompressed(file) {
			return nil, nil // refused by LoadOrder, which names it
		}
		info, err := ReadModinfo(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		var files []string
		var missing []string
		for _, d := range info.Depends {
			switch f, ok := ix.file[ModName(d)]; {
			case ok:
				files = append(files, f)
			case !ix.builtin[ModName(d)]:
				missing = append(missing, d)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return nil, fmt.Errorf("%s needs %s, neither a module file in %s nor built in", file, strings.Join(missing, ", "), dir)
		}
		return files, nil
	}
	return ix, nil
}
