package debcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
)

// Marker is the file that says a directory is an rxevm cache. rxevm
// removes files only in a directory that carries it, and only names it makes
// itself (ownName), so that a mistyped RDMABENCH_VM_CACHE (say
// /var/cache under sudo) can never cost anyone data.
const Marker = ".rxevm-cache"

const MarkerText = "This directory is a cache of rxevm (rdmabench). rxevm removes only the\n" +
	"names it creates here: 16-hex-digit cache versions, debs/*.deb, plugins/,\n" +
	"lock, current, resolved, kvm-unusable. Removing the whole directory is safe.\n"

// PluginDir holds the QEMU plugins rxevm builds (internal/vm/insns).
const PluginDir = "plugins"

// keyName matches a cache version directory and the
// temporary directory it is built in.
var keyName = regexp.MustCompile(`^[0-9a-f]{16}(\.tmp)?$`)

// debName matches the files apt-get download writes: name_version_arch.deb.
var debName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]*_[A-Za-z0-9.+~%-]+_(amd64|all)\.deb$`)

// cacheFiles are the plain files rxevm writes at the top of a cache.
var cacheFiles = map[string]bool{
	Marker: true, "lock": true, "current": true, "resolved": true, "kvm-unusable": true,
}

// ownName reports whether name, at the top of a cache directory, is one
// rxevm creates.
func ownName(e os.DirEntry) bool {
	switch {
	case e.IsDir():
		return e.Name() == "debs" || e.Name() == PluginDir || keyName.MatchString(e.Name())
	case e.Type().IsRegular():
		// A marker's temporary file is left only by a crash mid-write.
		return cacheFiles[e.Name()] || strings.HasPrefix(e.Name(), Marker+".tmp") || cacheTemp(e.Name())
	}
	return false
}

// cacheTemp reports whether name is atomicfile's temporary file of one of
// cacheFiles, left by an rxevm killed while writing it.
func cacheTemp(name string) bool {
	for f := range cacheFiles {
		if atomicfile.IsTemp(name, f) {
			return true
		}
	}
	return false
}

// ErrForeign means a cache directory holds files rxevm did not make.
var ErrForeign = errors.New("not an rxevm cache")

// Claim makes sure dir is an rxevm cache, creating it when missing. A
// directory that carries the marker is one; an empty directory, or one whose
// every entry is a name rxevm creates (a cache made before the marker
// existed), is adopted by writing the marker. Anything else is refused, and
// nothing is written into it.
func Claim(dir string, logf func(format string, args ...any)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(filepath.Join(dir, Marker)); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var foreign []string
	for _, e := range ents {
		if !ownName(e) || e.Name() == "debs" && !onlyDebs(filepath.Join(dir, "debs")) {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		if len(foreign) > 5 {
			foreign = append(foreign[:5], "...")
		}
		return fmt.Errorf("%w: %s holds files rxevm did not make (%s) and no %s marker; "+
			"rxevm prunes its cache, so it will not use this directory: point RDMABENCH_VM_CACHE "+
			"at an empty or new directory (for example RDMABENCH_VM_CACHE=$HOME/.cache/rdmabench/rxevm)",
			ErrForeign, dir, strings.Join(foreign, ", "), Marker)
	}
	if len(ents) > 0 {
		logf("adopting %s as an rxevm cache (every entry is one rxevm makes): writing %s", dir, Marker)
	}
	return writeMarker(dir)
}

// writeMarker creates the marker without following a symlink planted in its
// place; several rxevm may race to write it, and any of them may win.
func writeMarker(dir string) error {
	p := filepath.Join(dir, Marker)
	tmp, err := os.CreateTemp(dir, Marker+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(MarkerText)
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// onlyDebs reports whether dir holds nothing but .deb files.
func onlyDebs(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !debName.MatchString(e.Name()) {
			return false
		}
	}
	return true
}

// IsCache reports whether dir carries the marker.
func IsCache(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, Marker))
	return err == nil && fi.Mode().IsRegular()
}

// Prune removes the cache version directories of dir other than keep. It
// does nothing unless dir carries the marker, and touches no other name.
func Prune(dir, keep string) {
	if !IsCache(dir) {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() && e.Name() != keep && keyName.MatchString(e.Name()) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
		if e.Type().IsRegular() && cacheTemp(e.Name()) {
			os.Remove(filepath.Join(dir, e.Name())) // a killed write's; the caller holds the lock
		}
	}
}

// PruneDebs removes the .deb files in dir/debs of packages other than keep,
// under the same rules as Prune.
func PruneDebs(dir string, keep []Package) {
	if !IsCache(dir) {
		return
	}
	want := map[string]bool{}
	for _, p := range keep {
		want[DebFile(p)] = true
	}
	debs, _ := os.ReadDir(filepath.Join(dir, "debs"))
	for _, e := range debs {
		if e.Type().IsRegular() && debName.MatchString(e.Name()) && !want[e.Name()] {
			os.Remove(filepath.Join(dir, "debs", e.Name()))
		}
	}
}
