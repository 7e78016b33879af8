package rdmalat

import (
	"fmt"

	"github.com/rdmabench/rdmabench/env"
)

// DefaultCPUs returns the CPUs the loopback initiator and responder are
// pinned to by default: env's choice (env.Config.PinCPUs with nothing
// named), the last two this process may run on.
func DefaultCPUs() ([2]int, error) {
	cpus, err := env.Config{}.PinCPUs()
	if err != nil {
		return cpus, fmt.Errorf("rdmalat: %w", err)
	}
	return cpus, nil
}
