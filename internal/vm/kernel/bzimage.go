package kernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrNotBzImage means a file is not an x86 bzImage.
var ErrNotBzImage = errors.New("not an x86 bzImage")

// The x86 boot protocol's setup header (Documentation/arch/x86/boot.rst):
// "HdrS" at 0x202, the protocol version at 0x206 and, from version 2.00, at
// 0x20e the offset (from 0x200) of a NUL-terminated version string that
// starts with the release ("6.1.0-57-amd64 (debian-kernel@...) #1 SMP ...").
const (
	setupMagicOff   = 0x202
	setupVersionOff = 0x206
	kernelVersionAt = 0x20e
	setupBase       = 0x200
)

// Release returns the kernel release of the bzImage name, "" when the
// image carries none (a boot protocol before 2.00). A file that is not a
// bzImage (an uncompressed vmlinux among them) is ErrNotBzImage.
func Release(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 0x210)
	n, _ := io.ReadFull(f, head)
	switch {
	case n >= 4 && string(head[:4]) == "\x7fELF":
		return "", fmt.Errorf("%s: %w: an ELF file (vmlinux?); give the compressed image, arch/x86/boot/bzImage", name, ErrNotBzImage)
	case n < len(head) || string(head[setupMagicOff:setupMagicOff+4]) != "HdrS":
		return "", fmt.Errorf("%s: %w (no HdrS setup header)", name, ErrNotBzImage)
	}
	if binary.LittleEndian.Uint16(head[setupVersionOff:]) < 0x200 {
		return "", nil
	}
	off := binary.LittleEndian.Uint16(head[kernelVersionAt:])
	if off == 0 {
		return "", nil
	}
	s := make([]byte, 256)
	n, err = f.ReadAt(s, int64(setupBase)+int64(off))
	if n == 0 && err != nil {
		return "", fmt.Errorf("%s: version string: %w", name, err)
	}
	s = s[:n]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if f := strings.Fields(string(s)); len(f) > 0 {
		return f[0], nil
	}
	return "", nil
}
