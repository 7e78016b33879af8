package initramfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

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
