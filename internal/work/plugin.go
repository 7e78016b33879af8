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
	f *os.File
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
	var buf [256]byte
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
	return Counts{User: v[0], Kernel: v[1], KernelWait: v[2], KernelOther: v[3]}, v[4], nil
}

// trunc bounds what an error quotes of a file.
func trunc(b []byte) []byte {
	if len(b) > 60 {
		return b[:60]
	}
	return b
}
