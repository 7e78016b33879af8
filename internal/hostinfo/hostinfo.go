// Package hostinfo reads the parts of a Linux host that move RDMA latency:
// the CPU model, SMT and NUMA placement, frequency governor, boost and idle
// states of the CPUs a benchmark runs on, the PM QoS limit in force, where
// an RDMA device's interrupts may land, its driver and rdma-core version,
// the clocksource, the hypervisor and the kernel. Results are short strings
// meant for benchmark configuration lines; Collect gathers them all, in a
// fixed order, with the Warnings about what distorts latency and what to
// do (checks.go).
//
// Every function takes the file system to read as an fs.FS rooted at "/"
// (Root), so tests feed it a fake /sys and /proc. A missing file is not an
// error: the answer says what is unknown ("no cpufreq"), because a VM or a
// container often lacks these files and a benchmark should still run.
package hostinfo

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// Root is the host's own file system.
var Root fs.FS = os.DirFS("/")

func readTrim(fsys fs.FS, name string) (string, bool) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

func readInt(fsys fs.FS, name string) (int, bool) {
	s, ok := readTrim(fsys, name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func cpuDir(cpu int) string { return "sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) }

// readGovernor returns the cpufreq scaling governor of cpu, like "performance",
// or "no cpufreq" when the host exposes none (VMs, some containers).
// Equivalent to cat /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor.
func readGovernor(fsys fs.FS, cpu int) string {
	if g, ok := readTrim(fsys, cpuDir(cpu)+"/cpufreq/scaling_governor"); ok && g != "" {
		return g
	}
	return "no cpufreq"
}

// readIdleStates returns cpu's idle states in order, each name followed by "-"
// when disabled, like "POLL,C1,C1E,C6-"; "no cpuidle" when the host exposes
// none. Deep idle states enabled on a polling CPU are the classic cause of
// long wake-up tails.
func readIdleStates(fsys fs.FS, cpu int) string {
	states := CPUIdleStates(fsys, cpu)
	if len(states) == 0 {
		return "no cpuidle"
	}
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = s.Name
		if s.Disabled {
			names[i] += "-"
		}
	}
	return strings.Join(names, ",")
}

// IdleState is one cpuidle state of a CPU, as in
// /sys/devices/system/cpu/cpuN/cpuidle/stateI.
type IdleState struct {
	Index       int    // I in stateI
	Name        string // "POLL", "C1", "C6"
	ExitLatency int    // microseconds to wake from it (its latency file); -1 unknown
	Disabled    bool   // its disable file reads 1
}

// CPUIdleStates returns cpu's idle states sorted by index; nil when the
// host exposes none.
func CPUIdleStates(fsys fs.FS, cpu int) []IdleState {
	dir := cpuDir(cpu) + "/cpuidle"
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	var states []IdleState
	for _, e := range entries {
		num, ok := strings.CutPrefix(e.Name(), "state")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		s := IdleState{Index: n, ExitLatency: -1}
		s.Name, _ = readTrim(fsys, path.Join(dir, e.Name(), "name"))
		if s.Name == "" {
			s.Name = e.Name()
		}
		if l, ok := readInt(fsys, path.Join(dir, e.Name(), "latency")); ok {
			s.ExitLatency = l
		}
		d, _ := readTrim(fsys, path.Join(dir, e.Name(), "disable"))
		s.Disabled = d == "1"
		states = append(states, s)
	}
	slices.SortFunc(states, func(a, b IdleState) int { return a.Index - b.Index })
	return states
}

// readIRQAffinity summarises where the interrupts of RDMA device dev may be
// delivered: "N irqs on cpus LIST" with the union of their
// /proc/irq/N/smp_affinity_list, or "no irqs" for a device with no MSI
// interrupts of its own (soft-RoCE rides on its netdev).
func readIRQAffinity(fsys fs.FS, dev string) string {
	irqs := DeviceIRQs(fsys, dev)
	if len(irqs) == 0 {
		return "no irqs"
	}
	var cpus []int
	for _, irq := range irqs {
		cpus = append(cpus, irq.Affinity...)
	}
	return fmt.Sprintf("%d irqs on cpus %s", len(irqs), env.FormatCPUList(cpus))
}

// readKernel returns the running kernel's release, like uname -r.
func readKernel(fsys fs.FS) string {
	if r, ok := readTrim(fsys, "proc/sys/kernel/osrelease"); ok {
		return r
	}
	return "unknown"
}

func joinCollapsed(cpus []int, f func(int) string) string {
	var vals []string
	for _, c := range cpus {
		vals = append(vals, f(c))
	}
	if len(vals) == 0 {
		return "unknown"
	}
	if len(slices.Compact(slices.Clone(vals))) == 1 {
		return vals[0]
	}
	return strings.Join(vals, "/")
}

// readClocksource returns the kernel's current clocksource, like "tsc". Some
// (tsc, kvm-clock, arch_sys_counter) are read in user space through the
// vDSO, others (hpet, acpi_pm) make every clock_gettime a system call and a
// device read; the warning rests on MeasureClockCost, not on the name.
func readClocksource(fsys fs.FS) string {
	if s, ok := readTrim(fsys, "sys/devices/system/clocksource/clocksource0/current_clocksource"); ok && s != "" {
		return s
	}
	return "unknown"
}
