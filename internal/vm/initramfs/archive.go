// Package initramfs builds the guest's initial RAM file systems: an in-memory
// file tree written as a cpio "newc" archive, the format the Linux kernel
// unpacks as initramfs. Archives written back to back are unpacked in order,
// later entries replacing earlier ones, which is how rxevm lays a run's files
// over a cached base.
package initramfs

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// An Archive is an in-memory description of a file tree that is written as
// one cpio "newc" archive, the format the Linux kernel unpacks as initramfs.
//
// Paths are guest paths, absolute or not, cleaned and canonicalized with
// GuestPath. Parent directories are added implicitly, and entries are written
// sorted so that every directory comes before what it holds: the kernel's
// unpacker does not create missing parents.
type Archive struct {
	entries map[string]*entry
}

// An entry is one file, directory, symbolic link or device node.
type entry struct {
	mode  uint32 // type bits and permissions, as in stat(2)
	data  []byte // contents; nil when src is set
	src   string // host file whose contents are read when writing
	size  int64  // length of src's contents
	link  string // symlink target
	major uint32 // device numbers for character devices
	minor uint32
}

// Type bits of the cpio mode field (the same values as in stat(2)).
const (
	modeDir     = 0o040000
	modeFile    = 0o100000
	modeSymlink = 0o120000
	modeCharDev = 0o020000
)

// New returns an empty archive.
func New() *Archive {
	return &Archive{entries: make(map[string]*entry)}
}

// MergedUsr lists the top-level directories that are symbolic links into
// /usr in the guest, as on a merged-/usr Debian system.
var MergedUsr = []string{"bin", "sbin", "lib", "lib64"}

// GuestPath cleans p and rewrites paths under /bin, /sbin, /lib and /lib64
// to their place under /usr, so that nothing is ever written through one of
// the guest's top-level symbolic links. The result has no leading slash.
func GuestPath(p string) string {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	for _, d := range MergedUsr {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "usr/" + p
		}
	}
	return p
}

// Has reports whether the archive holds an entry at guest path p.
func (a *Archive) Has(p string) bool {
	_, ok := a.entries[GuestPath(p)]
	return ok
}

// Paths returns the sorted guest paths of the archive's entries.
func (a *Archive) Paths() []string {
	ps := make([]string, 0, len(a.entries))
	for p := range a.entries {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// add records e at guest path p and makes its parent directories.
func (a *Archive) add(p string, e *entry) {
	p = GuestPath(p)
	if p == "" {
		return
	}
	a.mkdirAll(path.Dir(p))
	a.entries[p] = e
}

// mkdirAll adds directory p and its parents, keeping existing entries.
func (a *Archive) mkdirAll(p string) {
	for p != "." && p != "/" && p != "" {
		if _, ok := a.entries[p]; ok {
			return
		}
		a.entries[p] = &entry{mode: modeDir | 0o755}
		p = path.Dir(p)
	}
}

// Dir adds a directory with the given permissions.
func (a *Archive) Dir(p string, perm uint32) {
	a.add(p, &entry{mode: modeDir | perm})
}

// File adds a regular file with the given contents and permissions.
func (a *Archive) File(p string, perm uint32, data []byte) {
	a.add(p, &entry{mode: modeFile | perm, data: data})
}

// Symlink adds a symbolic link to target.
func (a *Archive) Symlink(p, target string) {
	a.add(p, &entry{mode: modeSymlink | 0o777, link: target})
}

// CharDev adds a character device node.
func (a *Archive) CharDev(p string, perm, major, minor uint32) {
	a.add(p, &entry{mode: modeCharDev | perm, major: major, minor: minor})
}

// HostFile adds the host file src (following symbolic links) at guest path p,
// keeping its permissions. Its contents are read when the archive is written.
func (a *Archive) HostFile(p, src string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	a.add(p, &entry{mode: modeFile | uint32(fi.Mode().Perm()), src: src, size: fi.Size()})
	return nil
}

// HostTree adds the host directory tree rooted at src under guest path p,
// keeping regular files, directories and symbolic links (copied as links).
// skip, when not nil, is called with each path relative to src; returning
// true leaves that path (and, for a directory, its contents) out.
func (a *Archive) HostTree(p, src string, skip func(rel string) bool) error {
	return fs.WalkDir(os.DirFS(src), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel != "." && skip != nil && skip(rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		host := path.Join(src, rel)
		guest := path.Join(p, rel)
		switch t := d.Type(); {
		case t.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			a.Dir(guest, uint32(fi.Mode().Perm()))
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return err
			}
			a.Symlink(guest, target)
		case t.IsRegular():
			return a.HostFile(guest, host)
		}
		return nil
	})
}

// Encode writes the archive in newc format, followed by the trailer.
func (a *Archive) Encode(w io.Writer) error {
	cw := &cpioWriter{w: bufio.NewWriterSize(w, 1<<20)}
	for _, p := range a.Paths() {
		if err := cw.writeEntry(p, a.entries[p]); err != nil {
			return err
		}
	}
	return cw.close()
}

// WriteFile writes the archive to the host file name.
func (a *Archive) WriteFile(name string) error {
	return a.encodeTo(os.Create(name))
}

// encodeTo writes the archive to f, just opened (or not: err), and closes it.
func (a *Archive) encodeTo(f *os.File, err error) error {
	if err != nil {
		return err
	}
	if err := a.Encode(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// MergedUsrLinks adds the top-level symbolic links of a merged-/usr system
// (/bin -> usr/bin and the like). They bypass GuestPath, which would
// otherwise turn each link into a directory under /usr.
func (a *Archive) MergedUsrLinks() {
	for _, d := range MergedUsr {
		a.entries[d] = &entry{mode: modeSymlink | 0o777, link: "usr/" + d}
	}
}

// HostSources returns the host files whose contents the archive copies, in
// the order of their guest paths.
func (a *Archive) HostSources() []string {
	var srcs []string
	for _, p := range a.Paths() {
		if e := a.entries[p]; e.src != "" {
			srcs = append(srcs, e.src)
		}
	}
	return srcs
}

// AppendTo appends the archive to the host file name, after the archives
// already there.
func (a *Archive) AppendTo(name string) error {
	return a.encodeTo(os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0))
}

// Concat writes the host files srcs, one after another, to dst: archives
// concatenated this way unpack as one.
func Concat(dst string, srcs ...string) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		in, err := os.Open(s)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}
