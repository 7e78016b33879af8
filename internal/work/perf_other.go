//go:build !linux

package work

import (
	"fmt"
	"runtime"
)

func openPerf() (Counter, error) {
	return nil, fmt.Errorf("hardware instruction counters are not supported on %s", runtime.GOOS)
}
