package env

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultCPUs returns the CPUs the benchmarks pin to when RDMABENCH_CPUS
// is unset: the last two this process may run on (initiator, responder),
// away from CPU 0 where housekeeping and interrupts tend to land; fewer
// when fewer are allowed.
func DefaultCPUs() ([]int, error) {
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, err
	}
	return lastTwo(allowed), nil
}

func lastTwo(allowed []int) []int { return allowed[max(0, len(allowed)-2):] }

// PinCPUs resolves the initiator's and the loopback responder's CPUs
// (NoCPU: unpinned) from c.CPUs, c.NoPin and DefaultCPUs. The two
// busy-polling threads need two distinct CPUs; in two-node mode (c.Peer
// set) with no CPUs named, an initiator that cannot have them runs
// unpinned.
func (c Config) PinCPUs() ([2]int, error) {
	switch {
	case c.NoPin:
		return [2]int{NoCPU, NoCPU}, nil
	case len(c.CPUs) == 2:
		return [2]int{c.CPUs[0], c.CPUs[1]}, nil
	}
	allowed, err := AllowedCPUs()
	if err == nil {
		var cpus [2]int
		if cpus, err = pinFrom(c.CPUs, allowed); err == nil {
			return cpus, nil
		}
	}
	if c.Peer != "" && len(c.CPUs) == 0 {
		return [2]int{NoCPU, NoCPU}, nil
	}
	return [2]int{NoCPU, NoCPU}, err
}

// pinFrom is PinCPUs for named (none or one CPU) and the allowed CPUs.
func pinFrom(named, allowed []int) ([2]int, error) {
	def := lastTwo(allowed)
	if len(def) < 2 {
		return [2]int{NoCPU, NoCPU}, fmt.Errorf("loopback needs two CPUs for its two busy-polling threads, this process may use %s (set %s=none to run unpinned anyway)", FormatCPUList(allowed), VarCPUs)
	}
	cpus := [2]int{def[0], def[1]}
	if len(named) == 1 {
		cpus[0] = named[0]
		if cpus[1] == cpus[0] {
			cpus[1] = def[0] // the other of the last two
		}
	}
	return cpus, nil
}

// ParseCPUList parses the kernel's CPU list form, "0-3,8", skipping what
// it cannot read.
func ParseCPUList(s string) []int {
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				continue
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// FormatCPUList writes CPUs in the kernel's list form, "0-3,8".
func FormatCPUList(cpus []int) string {
	cpus = slices.Clone(cpus)
	slices.Sort(cpus)
	cpus = slices.Compact(cpus)
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
