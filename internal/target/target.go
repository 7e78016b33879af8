// Package target resolves which RDMA device and measuring CPUs the host
// tools (rdmacheck, rdmatune) report on or tune: their flags first, then
// the benchmarks' own RDMABENCH_DEVICE and RDMABENCH_CPUS, then the
// benchmarks' defaults (package env's rules, read from sysfs), so that the
// tools look at what a benchmark run would use.
package target

import (
	"fmt"
	"io/fs"
	"slices"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

// Target is the device and CPUs resolved.
type Target struct {
	Device string // "" when the host has none
	CPUs   []int  // initiator[, responder]; nil when unpinned
}

// Resolve picks the device from device, else getenv(env.VarDevice), else
// env.FirstActive as sysfs in fsys shows it; and the CPUs from cpus, else
// getenv(env.VarCPUs), else env.DefaultCPUs. A CPU list is read by
// env.ParseCPUs: "A,B" (initiator, responder), "A", or "none"; CPUs this
// process may not use are refused as the benchmark refuses them
// (env.CheckCPUs).
func Resolve(fsys fs.FS, device, cpus string, getenv func(string) string) (Target, error) {
	var t Target
	probe := hostinfo.SysfsProbe{FS: fsys}
	t.Device = device
	if t.Device == "" {
		t.Device = getenv(env.VarDevice)
	}
	if t.Device == "" {
		t.Device, _ = env.FirstActive(probe) // none: the tools report on the host alone
	} else if names, _ := probe.Devices(); !slices.Contains(names, t.Device) {
		return t, fmt.Errorf("no RDMA device %q in /sys/class/infiniband (rdmainfo lists the devices)", t.Device)
	}
	source := "-cpus"
	if cpus == "" {
		cpus, source = getenv(env.VarCPUs), env.VarCPUs
	}
	list, none, err := env.ParseCPUs(source, cpus)
	switch {
	case err != nil:
		return t, err
	case none:
		return t, nil
	case list != nil:
		if err := env.CheckCPUs(source, list); err != nil {
			return t, err
		}
		t.CPUs = list
		return t, nil
	}
	if t.CPUs, err = env.DefaultCPUs(); err != nil {
		return t, err
	}
	return t, nil
}
