package vm

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
)

// progressLog returns the function that prints progress lines ("rxevm: "
// and the text) to stderr, when -v is given or showProgress allows, and to the
// -log file when one is given.
func progressLog(c *Config, stderr io.Writer) (func(string, ...any), func()) {
	var ws []io.Writer
	if c.Verbose || showProgress() {
		ws = append(ws, stderr)
	}
	closeLog := func() {}
	if c.LogFile != "" {
		f, err := os.OpenFile(c.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "rxevm: -log: %v\n", err)
		} else {
			ws = append(ws, f)
			closeLog = func() { f.Close() }
		}
	}
	w := io.MultiWriter(ws...)
	return func(format string, args ...any) {
		fmt.Fprintf(w, "rxevm: "+format+"\n", args...)
	}, closeLog
}

// showProgress reports whether progress lines may go to stderr by default.
// go test -exec sends the program's stdout and stderr into one pipe, where a
// line like "rxevm: boot took 7.1 s" would read as a benchmark configuration
// line ("key: value") to benchstat and split its tables; so when stderr is
// the same pipe or file as stdout, rxevm stays quiet unless -v is given.
func showProgress() bool {
	var o, e unix.Stat_t
	if unix.Fstat(1, &o) != nil || unix.Fstat(2, &e) != nil {
		return true
	}
	if o.Dev != e.Dev || o.Ino != e.Ino {
		return true
	}
	_, err := unix.IoctlGetTermios(2, ioctlReadTermios)
	return err == nil // a terminal
}

// A kvmMemo remembers, in the cache directory, that KVM showed no sign of
// life on this host kernel, so that -accel auto does not spend the KVM
// boot bound on every run. Removing the file makes rxevm try KVM again.
type kvmMemo struct {
	dir string
}

func (m kvmMemo) file() string { return filepath.Join(m.dir, "kvm-unusable") }

// hostKernel returns the host's kernel release and version.
func hostKernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

// failed reports whether KVM failed before on this host kernel.
func (m kvmMemo) failed(logf func(string, ...any)) bool {
	b, err := os.ReadFile(m.file())
	if err != nil || strings.TrimSpace(string(b)) != hostKernel() {
		return false
	}
	logf("KVM showed no sign of life on this host before; using TCG (remove %s to try KVM again)", m.file())
	return true
}

// record notes that KVM failed on this host kernel.
func (m kvmMemo) record() {
	atomicfile.WriteFile(m.file(), []byte(hostKernel()+"\n"), 0o644)
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
