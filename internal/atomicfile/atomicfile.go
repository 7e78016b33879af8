// Package atomicfile writes a file whole or not at all: under a temporary
// name beside it, then renamed over it, so that a reader (on another node
// of a shared filesystem too) never sees half of it, and a process killed
// while writing leaves the old file, or none, never a cut one. It is the
// module's one such helper.
package atomicfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix starts the temporary names, ".NAME.tmp-": hidden, and
// recognisable as ours (IsTemp).
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// Write creates or replaces the file at path with what fill writes, with
// permissions perm (not reduced by the umask), creating its directory. The
// data is synced before the rename. On any error the temporary file is
// removed and path is left as it was.
func Write(path string, perm os.FileMode, fill func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	err = fill(tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// WriteFile is Write of data.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

// IsTemp reports whether name (a base name) is a temporary file Write
// made for target (a base name), as a sweep of a killed writer's leftovers
// needs.
func IsTemp(name, target string) bool { return strings.HasPrefix(name, tempPrefix(target)) }
