//go:build !cgo || !linux

package loops

import "errors"

var errNoCgo = errors.New("rdmalat: the latency loops need cgo and libibverbs on Linux (CGO_ENABLED=1, apt-get install libibverbs-dev)")

// Loop is not available without cgo: New fails with a reason.
type Loop struct{}

// New fails: the loops are C.
func New(Config) (*Loop, error) { return nil, errNoCgo }

func (*Loop) Posted() int                 { return 0 }
func (*Loop) SkewCounter(uint64)          {}
func (*Loop) ExpectSource(uint32)         {}
func (*Loop) SetExtraWork(uint32)         {}
func (*Loop) Stop()                       {}
func (*Loop) Finish()                     {}
func (*Loop) EnableParking() error        { return errNoCgo }
func (*Loop) Park()                       {}
func (*Loop) Parked() bool                { return false }
func (*Loop) Unpark()                     {}
func (*Loop) Free()                       {}
func (*Loop) Ping([]int64) error          { return errNoCgo }
func (*Loop) Pong(uint64) (uint64, error) { return 0, errNoCgo }

// ClockCost is not available without cgo.
func ClockCost(int) float64 { return 0 }
