package work

import (
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
// fractions: a difference of two runs.
type PerOp struct {
	User, Kernel, KernelWait, KernelOther float64
}

// ErrRuns means two runs cannot give a difference per operation.
var ErrRuns = errors.New("work per operation needs two runs of different lengths")

// Between returns the work per operation of a program run for n1 and for
// n2 operations that counted c1 and c2: (c2-c1)/(n2-n1), part by part, so
// that what the program does once, whatever the number of operations,
// cancels. A part may come out negative when what it counts follows time
// (kernel-wait, kernel-other) and the shorter run happened to take more.
func Between(c1, c2 Counts, n1, n2 uint64) (PerOp, error) {
	if n2 <= n1 {
		return PerOp{}, fmt.Errorf("%w: %d then %d operations (the second run must be the longer)", ErrRuns, n1, n2)
	}
	d := float64(n2 - n1)
	diff := func(a, b uint64) float64 { return (float64(b) - float64(a)) / d }
	return PerOp{
		User:        diff(c1.User, c2.User),
		Kernel:      diff(c1.Kernel, c2.Kernel),
		KernelWait:  diff(c1.KernelWait, c2.KernelWait),
		KernelOther: diff(c1.KernelOther, c2.KernelOther),
	}, nil
}
