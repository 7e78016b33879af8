//go:build !cgo || !linux

package rdmalat

import (
	"errors"
	"time"
)

var errNoCgo = errors.New("rdmalat: the latency engines need cgo and libibverbs on Linux (CGO_ENABLED=1, apt-get install libibverbs-dev)")

type cLoop struct{}

func newCLoop(*Endpoint, PeerInfo, int, time.Duration) (*cLoop, error) { return nil, errNoCgo }
func (*cLoop) stop()                                                   {}
func (*cLoop) finish()                                                 {}
func (*cLoop) free()                                                   {}
func (*cLoop) ping([]int64) error                                      { return errNoCgo }
func (*cLoop) pong(uint64) (uint64, error)                             { return 0, errNoCgo }

// ClockCost is not available without cgo.
func ClockCost(int) float64 { return 0 }
