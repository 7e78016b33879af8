package work

import (
	"errors"
	"fmt"
	"os"
)

// Counts are instructions counted since a Reset.
type Counts struct {
	User, Kernel uint64
}

// A Counter counts the instructions of the measured loops. Reset and Read
// bracket a measurement; both are called on the measuring goroutine with
// its thread locked (the hardware counter counts that thread).
type Counter interface {
	Reset() error
	Read() (Counts, error)
	Close() error
	// Source names what counts, for the benchmark's notes: "rxevm-plugin",
	// "perf".
	Source() string
}

// ErrUnavailable means no source of instruction counts works here; the
// error says why.
var ErrUnavailable = errors.New("no instruction counter")

// EnvPlugin is set by rxevm -insns in the guest: the file the plugin
// writes its counts to.
const EnvPlugin = "RXEVM_INSNS"

// Open returns the first counter that works here: rxevm's plugin when
// $RXEVM_INSNS names its counts, else the hardware counters of the calling
// thread. Otherwise it returns an error matching ErrUnavailable that says
// why. Call it on the measuring goroutine, with its thread locked.
func Open() (Counter, error) {
	if path := os.Getenv(EnvPlugin); path != "" {
		return OpenPlugin(path)
	}
	c, err := openPerf()
	if err != nil {
		return nil, fmt.Errorf("%w: not in rxevm -insns, and %v", ErrUnavailable, err)
	}
	return c, nil
}

// PerOp returns c per operation, as the benchmark metrics UnitUser and
// UnitKernel carry it.
func (c Counts) PerOp(ops uint64) (user, kernel float64) {
	if ops == 0 {
		return 0, 0
	}
	return float64(c.User) / float64(ops), float64(c.Kernel) / float64(ops)
}

// The metrics' units, beside the time metrics on a benchmark's line.
const (
	UnitUser   = "user-insns/op"
	UnitKernel = "kernel-insns/op"
)
