package main

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

// An archive is an in-memory description of a file tree that is written as
// one cpio "newc" archive, the format the Linux kernel unpacks as initramfs.
//
// Paths are guest paths, absolute or not, cleaned and canonicalized with
// guestPath. Parent directories are added implicitly, and entries are written
// sorted so that every directory comes before what it holds: the kernel's
// unpacker does not create missing parents.
type archive struct {
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

func newArchive() *archive {
	return &archive{entries: make(map[string]*entry)}
}

// mergedUsr lists the top-level directories that are symbolic links into
// /usr in the guest, as on a merged-/usr Debian system.
var mergedUsr = []string{"bin", "sbin", "lib", "lib64"}

// guestPath cleans p and rewrites paths under /bin, /sbin, /lib and /lib64
// to their place under /usr, so that nothing is ever written through one of
// the guest's top-level symbolic links. The result has no leading slash.
func guestPath(p string) string {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	for _, d := range mergedUsr {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "usr/" + p
		}
	}
	return p
}

// has reports whether the archive holds an entry at guest path p.
func (a *archive) has(p string) bool {
	_, ok := a.entries[guestPath(p)]
	return ok
}

// paths returns the sorted guest paths of the archive's entries.
func (a *archive) paths() []string {
	ps := make([]string, 0, len(a.entries))
	for p := range a.entries {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// add records e at guest path p and makes its parent directories.
func (a *archive) add(p string, e *entry) {
	p = guestPath(p)
	if p == "" {
		return
	}
	a.mkdirAll(path.Dir(p))
	a.entries[p] = e
}

// mkdirAll adds directory p and its parents, keeping existing entries.
func (a *archive) mkdirAll(p string) {
	for p != "." && p != "/" && p != "" {
		if _, ok := a.entries[p]; ok {
			return
		}
		a.entries[p] = &entry{mode: modeDir | 0o755}
		p = path.Dir(p)
	}
}

// dir adds a directory with the given permissions.
func (a *archive) dir(p string, perm uint32) {
	a.add(p, &entry{mode: modeDir | perm})
}

// file adds a regular file with the given contents and permissions.
func (a *archive) file(p string, perm uint32, data []byte) {
	a.add(p, &entry{mode: modeFile | perm, data: data})
}

// symlink adds a symbolic link to target.
func (a *archive) symlink(p, target string) {
	a.add(p, &entry{mode: modeSymlink | 0o777, link: target})
}

// charDev adds a character device node.
func (a *archive) charDev(p string, perm, major, minor uint32) {
	a.add(p, &entry{mode: modeCharDev | perm, major: major, minor: minor})
}

// hostFile adds the host file src (following symbolic links) at guest path p,
// keeping its permissions. Its contents are read when the archive is written.
func (a *archive) hostFile(p, src string) error {
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

// hostTree adds the host directory tree rooted at src under guest path p,
// keeping regular files, directories and symbolic links (copied as links).
// skip, when not nil, is called with each path relative to src; returning
// true leaves that path (and, for a directory, its contents) out.
func (a *archive) hostTree(p, src string, skip func(rel string) bool) error {
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
			a.dir(guest, uint32(fi.Mode().Perm()))
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return err
			}
			a.symlink(guest, target)
		case t.IsRegular():
			return a.hostFile(guest, host)
		}
		return nil
	})
}

// writeTo writes the archive in newc format, followed by the trailer.
func (a *archive) writeTo(w io.Writer) error {
	cw := &cpioWriter{w: bufio.NewWriterSize(w, 1<<20)}
	for _, p := range a.paths() {
		if err := cw.writeEntry(p, a.entries[p]); err != nil {
			return err
		}
	}
	return cw.close()
}

// writeFile writes the archive to the host file name.
func (a *archive) writeFile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := a.writeTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// A cpioWriter writes cpio archives in the "newc" (SVR4, no CRC) format:
// a 110-byte ASCII header, the NUL-terminated name and the data, each padded
// to a multiple of four bytes.
type cpioWriter struct {
	w   *bufio.Writer
	ino uint32
	n   int64 // bytes written, for padding
}

const cpioTrailer = "TRAILER!!!"

// writeEntry writes one entry's header, name and contents.
func (cw *cpioWriter) writeEntry(name string, e *entry) error {
	var size int64
	var body io.Reader
	switch e.mode &^ 0o7777 {
	case modeFile:
		if e.src != "" {
			f, err := os.Open(e.src)
			if err != nil {
				return err
			}
			defer f.Close()
			size, body = e.size, io.LimitReader(f, e.size)
		} else {
			size, body = int64(len(e.data)), strings.NewReader(string(e.data))
		}
	case modeSymlink:
		size, body = int64(len(e.link)), strings.NewReader(e.link)
	}
	nlink := uint32(1)
	if e.mode&^0o7777 == modeDir {
		nlink = 2
	}
	cw.ino++
	if err := cw.header(name, e.mode, nlink, size, e.major, e.minor); err != nil {
		return err
	}
	if body != nil {
		n, err := io.Copy(cw.w, body)
		cw.n += n
		if err != nil {
			return err
		}
		if n != size {
			return fmt.Errorf("%s: size changed while writing the archive", e.src)
		}
	}
	return cw.pad()
}

// header writes a newc header and the padded name.
func (cw *cpioWriter) header(name string, mode, nlink uint32, size int64, rmajor, rminor uint32) error {
	if size > 0xffffffff {
		return fmt.Errorf("%s: too large for a cpio archive", name)
	}
	h := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		cw.ino, mode, 0, 0, nlink, 0, size, 0, 0, rmajor, rminor, len(name)+1, 0)
	n, err := cw.w.WriteString(h + name + "\x00")
	cw.n += int64(n)
	if err != nil {
		return err
	}
	return cw.pad()
}

// pad writes NUL bytes up to the next multiple of four.
func (cw *cpioWriter) pad() error {
	for cw.n%4 != 0 {
		if err := cw.w.WriteByte(0); err != nil {
			return err
		}
		cw.n++
	}
	return nil
}

// close writes the trailer entry and flushes.
func (cw *cpioWriter) close() error {
	cw.ino++
	if err := cw.header(cpioTrailer, 0, 1, 0, 0, 0); err != nil {
		return err
	}
	return cw.w.Flush()
}
