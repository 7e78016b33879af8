// Package target resolves which RDMA device and measuring CPUs the host
// tools (rdmacheck, rdmatune) report on or tune: their flags first, then
// the benchmarks' own RDMABENCH_DEVICE and RDMABENCH_CPUS, then the
// benchmarks' defaults, so that the tools look at what a benchmark run
// would use.
package target

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/hostinfo"
)

// Target is the device and CPUs resolved.
type Target struct {
	Device string // "" when the host has none
	CPUs   []int  // initiator[, responder]; nil when unpinned
}

// Resolve picks the device from device, else getenv("RDMABENCH_DEVICE"),
// else the first one in fsys with an active port; and the CPUs from cpus,
// else getenv("RDMABENCH_CPUS"), else the last two this process may use.
// A CPU list is "A,B" (initiator, responder), "A", or "none".
func Resolve(fsys fs.FS, device, cpus string, getenv func(string) string) (Target, error) {
	var t Target
	t.Device = device
	if t.Device == "" {
		t.Device = getenv("RDMABENCH_DEVICE")
	}
	if t.Device == "" {
		t.Device = hostinfo.FirstDevice(fsys)
	} else if _, err := fs.Stat(fsys, "sys/class/infiniband/"+t.Device); err != nil {
		return t, fmt.Errorf("no RDMA device %q in /sys/class/infiniband (rdmainfo lists the devices)", t.Device)
	}
	source := "-cpus"
	if cpus == "" {
		cpus, source = getenv("RDMABENCH_CPUS"), "RDMABENCH_CPUS"
	}
	if cpus == "" {
		def, err := hostinfo.DefaultCPUs()
		if err != nil {
			return t, err
		}
		t.CPUs = def
		return t, nil
	}
	if cpus == "none" {
		return t, nil
	}
	for _, f := range strings.Split(cpus, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 0 {
			return t, fmt.Errorf("%s=%q: %q is not a CPU number (example: 2,3 for the initiator on CPU 2 and the responder on 3; none for unpinned)", source, cpus, f)
		}
		t.CPUs = append(t.CPUs, c)
	}
	if len(t.CPUs) > 2 {
		return t, fmt.Errorf("%s=%q names %d CPUs; give one (initiator) or two (initiator,responder)", source, cpus, len(t.CPUs))
	}
	return t, nil
}
