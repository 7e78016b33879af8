package vm

// The host's share of its CPUs. Under TCG each vCPU is a host thread, and
// the benchmark's two busy-polling threads keep two of them running flat
// out. On a host whose CPUs share a core (hyperthreads) or a hypervisor's
// time (a cloud VM, like the 2-CPU machines this project's CI runs on),
// the two slow each other by an amount that changes every few hundred
// milliseconds: latency then switches between a fast and a slow level
// (13 and 23 µs one-way at 2 B, measured), within a run and between runs,
// and no setting inside the guest can remove it. The guest cannot see
// it either, so rxevm times it before the boot (internal/cpuprobe, about
// 1 s, while the host is otherwise idle), says so, and passes the
// figure in env.VarHostCPUContention for the benchmarks to note.

import (
	"context"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/cpuprobe"
)

// measuringHostCPUs returns the host CPUs the guest's last two vCPUs
// (where the benchmarks poll) run on: by the -pin plan when pinned, else
// the last two this process may use, where the host scheduler is likely
// to put two busy threads. Nil when there are not two.
func measuringHostCPUs(pin []int, smp int) ([]int, error) {
	if len(pin) > 0 && smp >= 2 {
		a, b := pin[(smp-2)%len(pin)], pin[(smp-1)%len(pin)]
		if a == b {
			return nil, nil // both on one host CPU: nothing to compare
		}
		return []int{a, b}, nil
	}
	allowed, err := env.AllowedCPUs()
	if err != nil || len(allowed) < 2 {
		return nil, err
	}
	return allowed[len(allowed)-2:], nil
}

// probeHost times the measuring host CPUs and returns the guest
// environment entry that carries the result, or nil when there is nothing
// to probe. The figure goes to the progress log; the user sees the
// warning in the benchmarks' output, as a "#" line from hostinfo (a line
// of rxevm's own there would read as a config line to benchstat).
func probeHost(ctx context.Context, smp int, pin []int, logf func(string, ...any)) []string {
	cpus, err := measuringHostCPUs(pin, smp)
	if err == nil && cpus == nil {
		logf("host CPU probe: skipped (the measuring vCPUs do not run on two host CPUs)")
		return nil
	}
	var r cpuprobe.Result
	if err == nil {
		r, err = cpuprobe.Probe(ctx, cpuprobe.Options{CPUs: cpus, From: "rxevm -pin"})
	}
	if err != nil {
		logf("host CPU probe: %v", err)
		return nil
	}
	logf("host CPU probe: %s", r.Summary())
	return []string{env.VarHostCPUContention + "=" + r.Line().Value}
}
