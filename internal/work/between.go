package work

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// This file measures a program that has no markers of its own (perftest):
// through the LD_PRELOAD library rxevm shares with the guest
// (internal/vm/insns/preload), its threads open a window at their first
// post or poll and mark each poll a try, as rdmabench's loops do. The
// window then also holds what the program does once, before and after its
// loop (the first posts, the results, the teardown): running it twice,
// for n1 and n2 operations, and taking the difference divided by n2-n1
// leaves only what each operation costs.

// PreloadFile is the LD_PRELOAD library beside the plugin's counts file
// (internal/vm/insns.PreloadFile).
const PreloadFile = "preload.so"

// EnvPreloadSpin, set to PreloadSpinAfterCompletion in a program's
// environment, tells the preload library that the program spins in its
// own code between a completion and its next post (an RDMA WRITE
// ping-pong, on a buffer byte): that stretch is left out too.
const (
	EnvPreloadSpin             = "RXEVM_PRELOAD_SPIN"
	PreloadSpinAfterCompletion = "after-completion"
)

// EnvPreloadCalls names, in a program's environment, a CallTally's file:
// the preload library adds up there the calls through it whose
// instructions counted.
const EnvPreloadCalls = "RXEVM_PRELOAD_CALLS"

// PreloadCallInsns is what one call through the preload library adds to
// the count: its trampoline's two resume markers, the call of the real
// function and the return (preload.c; TestPreloadCallInsns in the VM).
const PreloadCallInsns = 4

// PreloadPath returns the path of the LD_PRELOAD library rxevm -insns
// shares, or an error matching ErrUnavailable that says why there is none.
func PreloadPath() (string, error) {
	counts := os.Getenv(EnvPlugin)
	if counts == "" {
		return "", fmt.Errorf("%w: not in rxevm -insns ($%s is not set)", ErrUnavailable, EnvPlugin)
	}
	p := filepath.Join(filepath.Dir(counts), PreloadFile)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: the preload library: %v (an rxevm from before it?)", ErrUnavailable, err)
	}
	return p, nil
}

// CloseWindows closes the windows of every vCPU: call it after a program
// measured through the preload library ended, since a thread may exit
// without closing the window it opened (a Go program's, or one killed).
func CloseWindows() { markCloseAll() }

// MeasureProgram returns the instructions counted while run runs a
// program under the preload library: c is reset, run runs, every window
// is closed, and c is read. It fails with ErrNoWindow when the program
// opened no window (it ran without the library, or posted nothing).
func MeasureProgram(c Counter, run func() error) (Counts, error) {
	if err := c.Reset(); err != nil {
		return Counts{}, err
	}
	err := run()
	CloseWindows()
	if err != nil {
		return Counts{}, err
	}
	return c.Read()
}

// PerOp is work per operation, each part as Counts counts it, as
// fractions: a difference of two runs. KernelWork is there only when both
// runs' counts had it (HasKernelWork: the plugin knew the kernel's roles).
type PerOp struct {
	User, Kernel, KernelWait, KernelOther float64

	KernelWork    float64
	HasKernelWork bool
}

// AllKernel is every kernel instruction counted, on every vCPU: it
// follows time (the timer's ticks and what they wake), as KernelWork,
// the figure to compare, does not.
func (p PerOp) AllKernel() float64 { return p.Kernel + p.KernelWait + p.KernelOther }

// LessCalls returns p without the preload library's own instructions,
// for calls counted calls through it per operation.
func (p PerOp) LessCalls(calls float64) PerOp {
	p.User -= PreloadCallInsns * calls
	return p
}

// A CallTally is the file the preload library adds up in, shared by every
// process of a run (EnvPreloadCalls): its calls whose instructions
// counted, and its waits for a WRITE ping-pong's answer that found none
// (a stretch dropped as a spin: a few a run, the peer's last answer that
// never comes; more means the method does not hold for the program).
type CallTally struct{ path string }

// NewCallTally makes a tally file, at zero, in dir.
func NewCallTally(dir string) (*CallTally, error) {
	t := &CallTally{path: filepath.Join(dir, "preload-calls")}
	return t, t.Reset()
}

// Env is the setting that points the preload library at the tally.
func (t *CallTally) Env() string { return EnvPreloadCalls + "=" + t.path }

// Reset zeroes the tally: call it before each run.
func (t *CallTally) Reset() error { return os.WriteFile(t.path, make([]byte, 16), 0o644) }

// Read returns the calls counted and the waits lost since the last Reset.
func (t *CallTally) Read() (calls, lost uint64, err error) {
	b, err := os.ReadFile(t.path)
	if err != nil {
		return 0, 0, err
	}
	return ParseCallTally(b)
}

// ParseCallTally reads a tally file's contents: two native-endian
// uint64s, calls and lost waits, as the library's atomic adds leave them.
func ParseCallTally(b []byte) (calls, lost uint64, err error) {
	if len(b) != 16 {
		return 0, 0, fmt.Errorf("%w: the preload library's tally has %d bytes, want 16 (an rxevm from before it?)", ErrMalformed, len(b))
	}
	return binary.NativeEndian.Uint64(b), binary.NativeEndian.Uint64(b[8:]), nil
}

// ErrRuns means two runs cannot give a difference per operation.
var ErrRuns = errors.New("work per operation needs two runs of different lengths")

// Between returns the work per operation of a program run for n1 and for
// n2 operations that counted c1 and c2: (c2-c1)/(n2-n1), part by part, so
// that what the program does once, whatever the number of operations,
// cancels. A part may come out negative when what it counts follows time
// (kernel-wait, kernel-other) and the shorter run happened to take more.
// The kernel's work (time's part left out) is there when both runs know
// the kernel's roles.
func Between(c1, c2 Counts, n1, n2 uint64) (PerOp, error) {
	if n2 <= n1 {
		return PerOp{}, fmt.Errorf("%w: %d then %d operations (the second run must be the longer)", ErrRuns, n1, n2)
	}
	d := float64(n2 - n1)
	diff := func(a, b uint64) float64 { return (float64(b) - float64(a)) / d }
	p := PerOp{
		User:        diff(c1.User, c2.User),
		Kernel:      diff(c1.Kernel, c2.Kernel),
		KernelWait:  diff(c1.KernelWait, c2.KernelWait),
		KernelOther: diff(c1.KernelOther, c2.KernelOther),
	}
	if c1.RolesKnown && c2.RolesKnown {
		p.KernelWork, p.HasKernelWork = diff(c1.KernelWork, c2.KernelWork), true
	}
	return p, nil
}
