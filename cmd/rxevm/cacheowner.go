package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// cacheMarker is the file that says a directory is an rxevm cache. rxevm
// removes files only in a directory that carries it, and only names it makes
// itself (cacheOwnName), so that a mistyped RDMABENCH_VM_CACHE (say
// /var/cache under sudo) can never cost anyone data.
const cacheMarker = ".rxevm-cache"

const cacheMarkerText = "This directory is a cache of rxevm (rdmabench). rxevm removes only the\n" +
	"names it creates here: 16-hex-digit cache versions, debs/*.deb, lock,\n" +
	"current, resolved, kvm-unusable. Removing the whole directory is safe.\n"

// cacheKeyName matches a cache version directory (cacheKey) and the
// temporary directory it is built in.
var cacheKeyName = regexp.MustCompile(`^[0-9a-f]{16}(\.tmp)?$`)

// debName matches the files apt-get download writes: name_version_arch.deb.
var debName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]*_[A-Za-z0-9.+~%-]+_(amd64|all)\.deb$`)

// cacheFiles are the plain files rxevm writes at the top of a cache.
var cacheFiles = map[string]bool{
	cacheMarker: true, "lock": true, "current": true, "resolved": true, "kvm-unusable": true,
}

// cacheOwnName reports whether name, at the top of a cache directory, is one
// rxevm creates.
func cacheOwnName(e os.DirEntry) bool {
	switch {
	case e.IsDir():
		return e.Name() == "debs" || cacheKeyName.MatchString(e.Name())
	case e.Type().IsRegular():
		// A marker's temporary file is left only by a crash mid-write.
		return cacheFiles[e.Name()] || strings.HasPrefix(e.Name(), cacheMarker+".tmp")
	}
	return false
}

// errForeignCache means a cache directory holds files rxevm did not make.
var errForeignCache = errors.New("not an rxevm cache")

// claimCache makes sure dir is an rxevm cache, creating it when missing. A
// directory that carries the marker is one; an empty directory, or one whose
// every entry is a name rxevm creates (a cache made before the marker
// existed), is adopted by writing the marker. Anything else is refused, and
// nothing is written into it.
func claimCache(dir string, logf logFunc) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(filepath.Join(dir, cacheMarker)); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var foreign []string
	for _, e := range ents {
		if !cacheOwnName(e) || e.Name() == "debs" && !onlyDebs(filepath.Join(dir, "debs")) {
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
			errForeignCache, dir, strings.Join(foreign, ", "), cacheMarker)
	}
	if len(ents) > 0 {
		logf("adopting %s as an rxevm cache (every entry is one rxevm makes): writing %s", dir, cacheMarker)
	}
	return writeMarker(dir)
}

// writeMarker creates the marker without following a symlink planted in its
// place; several rxevm may race to write it, and any of them may win.
func writeMarker(dir string) error {
	p := filepath.Join(dir, cacheMarker)
	tmp, err := os.CreateTemp(dir, cacheMarker+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(cacheMarkerText)
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

// isCache reports whether dir carries the marker.
func isCache(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, cacheMarker))
	return err == nil && fi.Mode().IsRegular()
}

// pruneVersions removes the cache version directories of dir other than
// keep, and (unless keepDebs is nil) the .deb files in dir/debs not named in
// keepDebs. It does nothing unless dir carries the marker, and touches no
// other name.
func pruneVersions(dir, keep string, keepDebs map[string]bool) {
	if !isCache(dir) {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() && e.Name() != keep && cacheKeyName.MatchString(e.Name()) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	if keepDebs == nil {
		return
	}
	debs, _ := os.ReadDir(filepath.Join(dir, "debs"))
	for _, e := range debs {
		if e.Type().IsRegular() && debName.MatchString(e.Name()) && !keepDebs[e.Name()] {
			os.Remove(filepath.Join(dir, "debs", e.Name()))
		}
	}
}
