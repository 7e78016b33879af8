package work

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// pluginCounter reads rxevm's instruction counter: the markers in marker_*.s
// make the plugin zero its counts (reset) and write them (report) to the
// file, which the guest reads through a 9p share.
type pluginCounter struct {
	f        *os.File
	rolesErr error // why the kernel's roles were not sent
}

// OpenPlugin opens the plugin's counts file path and checks that it reads
// as the plugin writes it.
func OpenPlugin(path string) (Counter, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: $%s: %v", ErrUnavailable, EnvPlugin, err)
	}
	c := &pluginCounter{f: f}
	if _, _, err := c.read(); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

func (c *pluginCounter) Source() string { return "rxevm-plugin" }

func (c *pluginCounter) Reset() error {
	// Without the roles (kallsyms unreadable) kernel-work-insns/op is
	// absent; the other counts do not need them.
	c.rolesErr = rolesSent()
	markReset()
	return nil
}

// ErrNoWindow means the plugin counted no window since the reset: the loop
// that ran has no markers (a build from before them, or a loop without).
var ErrNoWindow = errors.New("the instruction counter saw no marked loop since its reset")

func (c *pluginCounter) Read() (Counts, error) {
	markReport()
	n, windows, err := c.read()
	if err == nil && windows == 0 {
		err = ErrNoWindow
	}
	return n, err
}

func (c *pluginCounter) read() (Counts, uint64, error) {
	var buf [512]byte
	n, err := c.f.ReadAt(buf[:], 0)
	if err != nil && err != io.EOF {
		return Counts{}, 0, err
	}
	return ParseReport(buf[:n])
}

func (c *pluginCounter) Close() error {
	if c == nil || c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// ErrMalformed means a counts file does not read as the plugin writes it.
var ErrMalformed = errors.New("malformed instruction counts")

// ParseReport parses one report of the plugin:
//
//	rxevm-insns 1 user U kernel K kernel-wait KW kernel-other KO windows W
//
// (numbers padded to a fixed width, one line). It returns the counts and
// the windows opened since the last reset.
func ParseReport(b []byte) (Counts, uint64, error) {
	line, _, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return Counts{}, 0, fmt.Errorf("%w: no complete line in %q", ErrMalformed, trunc(b))
	}
	f := bytes.Fields(line)
	if len(f) < 2 || string(f[0]) != "rxevm-insns" {
		return Counts{}, 0, fmt.Errorf("%w: %q", ErrMalformed, trunc(line))
	}
	if string(f[1]) != "1" {
		return Counts{}, 0, fmt.Errorf("%w: version %q, want 1 (rxevm and this program are from different versions)", ErrMalformed, trunc(f[1]))
	}
	names := []string{"user", "kernel", "kernel-wait", "kernel-other", "windows"}
	if len(f) != 2+2*len(names) {
		return Counts{}, 0, fmt.Errorf("%w: %q", ErrMalformed, trunc(line))
	}
	var v [5]uint64
	for i, name := range names {
		n, err := strconv.ParseUint(string(f[3+2*i]), 10, 64)
		if string(f[2+2*i]) != name || err != nil {
			return Counts{}, 0, fmt.Errorf("%w: %q", ErrMalformed, trunc(line))
		}
		v[i] = n
	}
	c := Counts{User: v[0], Kernel: v[1], KernelWait: v[2], KernelOther: v[3]}
	if rest := b[len(line)+1:]; len(rest) > 0 {
		second, _, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return Counts{}, 0, fmt.Errorf("%w: no complete second line in %q", ErrMalformed, trunc(rest))
		}
		if err := parseKernelLine(second, &c); err != nil {
			return Counts{}, 0, err
		}
	}
	return c, v[4], nil
}

// parseKernelLine parses the report's second line (plugins from before it
// write none):
//
//	rxevm-insns-kernel 1 work W time T others O roles R
//
// R is the number of kernel roles the plugin knows: 0 leaves the split out.
func parseKernelLine(line []byte, c *Counts) error {
	f := bytes.Fields(line)
	names := []string{"work", "time", "others", "roles"}
	if len(f) != 2+2*len(names) || string(f[0]) != "rxevm-insns-kernel" || string(f[1]) != "1" {
		return fmt.Errorf("%w: %q", ErrMalformed, trunc(line))
	}
	var v [4]uint64
	for i, name := range names {
		n, err := strconv.ParseUint(string(f[3+2*i]), 10, 64)
		if string(f[2+2*i]) != name || err != nil {
			return fmt.Errorf("%w: %q", ErrMalformed, trunc(line))
		}
		v[i] = n
	}
	c.KernelWork, c.KernelTime, c.KernelOthers, c.RolesKnown = v[0], v[1], v[2], v[3] > 0
	return nil
}

// trunc bounds what an error quotes of a file.
func trunc(b []byte) []byte {
	if len(b) > 60 {
		return b[:60]
	}
	return b
}
