package work

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A Space is where instructions ran, as the plugin splits them (Counts).
type Space int

// The spaces, in the order of the plugin's profile columns.
const (
	SpaceUser Space = iota
	SpaceKernel
	SpaceKernelWait
	SpaceKernelOther
	// The same kernel instructions split by what they are (Counts): the
	// kernel's work on every vCPU, what follows time, other processes'
	// and kernel threads' (the plugin's profile-kernel file).
	SpaceKernelWork
	SpaceKernelTime
	SpaceKernelOthers
	nSpaces
)

// nRawSpaces is the number of spaces in the plugin's profile file.
const nRawSpaces = SpaceKernelWork

var spaceNames = [nSpaces]string{"user", "kernel", "kernel-wait", "kernel-other", "kernel-work", "kernel-time", "kernel-others"}

func (s Space) String() string {
	if s >= 0 && s < nSpaces {
		return spaceNames[s]
	}
	return "space(" + strconv.Itoa(int(s)) + ")"
}

// ParseSpace returns the Space named s.
func ParseSpace(s string) (Space, error) {
	for i, n := range spaceNames {
		if n == s {
			return Space(i), nil
		}
	}
	return 0, fmt.Errorf("unknown space %q: want one of %s", trunc([]byte(s)), strings.Join(spaceNames[:], ", "))
}

// A Sample is what the plugin counted for the block part starting at a
// guest address, per Space. Address 0 holds what found no room in the
// plugin's table.
type Sample struct {
	Addr uint64
	N    [nSpaces]uint64
}

// A RawProfile is the plugin's profile file: its counts per guest address
// since the last reset.
type RawProfile struct {
	Windows uint64
	Samples []Sample
}

// Bounds on what the parsers accept: a profile is written by the plugin
// (at most its 2^17 slots) or by WriteProfile, and may still be hostile.
const (
	maxProfileLines = 1 << 18
	maxSymbolLines  = 1 << 22 // kallsyms, maps: a kernel has some 10^5 symbols
	maxLineBytes    = 4096
)

// ErrMalformedProfile means a profile does not read as the plugin or
// WriteProfile writes it.
var ErrMalformedProfile = errors.New("malformed instruction profile")

// lines calls f on each line of r (without its newline), at most max
// lines of at most maxLineBytes each.
func lines(r io.Reader, max int, f func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		if n > max {
			return fmt.Errorf("%w: over %d lines", ErrMalformedProfile, max)
		}
		if err := f(n, sc.Text()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: line %d over %d bytes", ErrMalformedProfile, n+1, maxLineBytes)
		}
		return err
	}
	return nil
}

// ParseRawProfile parses the plugin's profile:
//
//	rxevm-insns-profile 1 windows W
//	ADDR USER KERNEL KERNEL-WAIT KERNEL-OTHER   (address in hex)
//	end
//
// A file without its end line is refused (a torn read).
func ParseRawProfile(r io.Reader) (RawProfile, error) {
	return parseRaw(r, "rxevm-insns-profile", SpaceUser, nRawSpaces)
}

// ParseRawKernelProfile parses the plugin's profile-kernel file, the same
// format with the header rxevm-insns-kernel-profile and the counts of
// kernel-work, kernel-time and kernel-others.
func ParseRawKernelProfile(r io.Reader) (RawProfile, error) {
	return parseRaw(r, "rxevm-insns-kernel-profile", SpaceKernelWork, nSpaces)
}

// Merge adds q's samples to p's, address by address.
func (p *RawProfile) Merge(q RawProfile) {
	at := map[uint64]int{}
	for i, s := range p.Samples {
		at[s.Addr] = i
	}
	for _, s := range q.Samples {
		i, ok := at[s.Addr]
		if !ok {
			i = len(p.Samples)
			at[s.Addr] = i
			p.Samples = append(p.Samples, Sample{Addr: s.Addr})
		}
		for j := range s.N {
			p.Samples[i].N[j] += s.N[j]
		}
	}
}

// parseRaw parses a profile file of the plugin whose header is head and
// whose columns are the spaces [from, to).
func parseRaw(r io.Reader, head string, from, to Space) (RawProfile, error) {
	var p RawProfile
	done := false
	err := lines(r, maxProfileLines, func(n int, line string) error {
		bad := func() error { return fmt.Errorf("%w: line %d: %q", ErrMalformedProfile, n, trunc([]byte(line))) }
		f := strings.Fields(line)
		switch {
		case done:
			return fmt.Errorf("%w: line %d after the end line", ErrMalformedProfile, n)
		case n == 1:
			if len(f) != 4 || f[0] != head || f[2] != "windows" {
				return bad()
			}
			if f[1] != "1" {
				return fmt.Errorf("%w: version %q, want 1 (rxevm and this program are from different versions)", ErrMalformedProfile, trunc([]byte(f[1])))
			}
			w, err := strconv.ParseUint(f[3], 10, 64)
			if err != nil {
				return bad()
			}
			p.Windows = w
		case len(f) == 1 && f[0] == "end":
			done = true
		case len(f) == 1+int(to-from):
			var s Sample
			var err error
			if s.Addr, err = strconv.ParseUint(f[0], 16, 64); err != nil {
				return bad()
			}
			for i := from; i < to; i++ {
				if s.N[i], err = strconv.ParseUint(f[1+int(i-from)], 10, 64); err != nil {
					return bad()
				}
			}
			p.Samples = append(p.Samples, s)
		default:
			return bad()
		}
		return nil
	})
	if err != nil {
		return RawProfile{}, err
	}
	if !done {
		return RawProfile{}, fmt.Errorf("%w: no end line (a torn or truncated file)", ErrMalformedProfile)
	}
	return p, nil
}

// A Func is where instructions are attributed: a function of an object
// (a library's or program's file name, vmlinux or a kernel module), in
// one Space.
type Func struct {
	Space  Space
	Object string
	Name   string
}

func (f Func) String() string { return f.Space.String() + " " + f.Object + " " + f.Name }

// A Profile is the instructions per operation of each function.
type Profile struct {
	Ops   uint64
	PerOp map[Func]float64
}

// Total returns the profile's instructions per operation in space s.
func (p Profile) Total(s Space) float64 {
	t := 0.0
	for f, v := range p.PerOp {
		if f.Space == s {
			t += v
		}
	}
	return t
}

// sorted returns p's functions, most instructions first.
func (p Profile) sorted() []Func {
	fs := make([]Func, 0, len(p.PerOp))
	for f := range p.PerOp {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if p.PerOp[a] != p.PerOp[b] {
			return p.PerOp[a] > p.PerOp[b]
		}
		return a.String() < b.String()
	})
	return fs
}

// WriteProfile writes p as text, most instructions first, one function a
// line: insns/op, space, object and function, tab-separated.
func WriteProfile(w io.Writer, p Profile) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "rdmawork-profile 1 ops %d\n# insns/op\tspace\tobject\tfunction\n", p.Ops)
	for _, f := range p.sorted() {
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\n", strconv.FormatFloat(p.PerOp[f], 'g', -1, 64), f.Space, f.Object, f.Name)
	}
	return bw.Flush()
}

// ParseProfile parses what WriteProfile wrote.
func ParseProfile(r io.Reader) (Profile, error) {
	p := Profile{PerOp: map[Func]float64{}}
	header := false
	err := lines(r, maxProfileLines, func(n int, line string) error {
		bad := func() error { return fmt.Errorf("%w: line %d: %q", ErrMalformedProfile, n, trunc([]byte(line))) }
		if n == 1 {
			f := strings.Fields(line)
			if len(f) != 4 || f[0] != "rdmawork-profile" || f[2] != "ops" {
				return fmt.Errorf("%w: line 1 is %q, not a profile's header (rdmawork-profile 1 ops N)", ErrMalformedProfile, trunc([]byte(line)))
			}
			if f[1] != "1" {
				return fmt.Errorf("%w: version %q, want 1", ErrMalformedProfile, trunc([]byte(f[1])))
			}
			ops, err := strconv.ParseUint(f[3], 10, 64)
			if err != nil {
				return bad()
			}
			p.Ops = ops
			header = true
			return nil
		}
		if strings.HasPrefix(line, "#") {
			return nil
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[2] == "" || f[3] == "" || !printable(f[2]) || !printable(f[3]) {
			return bad()
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return bad()
		}
		s, err := ParseSpace(f[1])
		if err != nil {
			return bad()
		}
		k := Func{s, f[2], f[3]}
		if _, dup := p.PerOp[k]; dup {
			return fmt.Errorf("%w: line %d: %s twice", ErrMalformedProfile, n, k)
		}
		p.PerOp[k] = v
		return nil
	})
	if err != nil {
		return Profile{}, err
	}
	if !header {
		return Profile{}, fmt.Errorf("%w: empty (no rdmawork-profile header)", ErrMalformedProfile)
	}
	return p, nil
}

// printable reports whether s has no control characters (names go to a
// terminal) and no newline or tab (they would not read back).
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
