package env

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// AllowedCPUs returns the CPUs this process may run on (taskset -p), in
// order: the one reading of the affinity mask that the default pinning,
// the check of RDMABENCH_CPUS and the host tools share.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// SetAffinity pins thread tid (0: the calling thread) to cpu alone
// (sched_setaffinity).
func SetAffinity(tid, cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(tid, &set)
}
