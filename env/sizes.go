package env

import (
	"fmt"
	"slices"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// SizesFor returns the sizes of c.Sizes that op can be measured at over
// c.Transport with the path MTU mtu, and a note for each one left out:
// atomics move 8 bytes whatever RDMABENCH_SIZES says (perftest's
// ib_atomic_lat refuses other sizes); over UD, sizes above the MTU are
// left out of RDMABENCH_SIZES=all (perftest -a caps them the same way) but
// an explicit one is an error, as for perftest -s.
func (c Config) SizesFor(op Op, mtu int) ([]int, []string, error) {
	sizes := c.Sizes
	if sizes == nil {
		sizes = defaultSizes
	}
	if op.Atomic() {
		if !slices.Equal(sizes, []int{spec.AtomicSize}) && !slices.Equal(sizes, defaultSizes) && !c.SizesAll {
			return []int{spec.AtomicSize}, []string{fmt.Sprintf("%s: %v runs at %d bytes only", VarSizes, op, spec.AtomicSize)}, nil
		}
		return []int{spec.AtomicSize}, nil, nil
	}
	var out []int
	var notes []string
	for _, size := range sizes {
		if err := spec.CheckSize(op, c.Transport, size, mtu); err != nil {
			if c.SizesAll {
				notes = append(notes, err.Error())
				continue
			}
			return nil, nil, fmt.Errorf("%s: %w", VarSizes, err)
		}
		out = append(out, size)
	}
	return out, notes, nil
}
