package hostinfo

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// readCPUModel returns the first "model name" of /proc/cpuinfo (x86), else
// its "Model" or "CPU part" line (arm64), else "unknown".
func readCPUModel(fsys fs.FS) string {
	info, ok := readTrim(fsys, "proc/cpuinfo")
	if !ok {
		return "unknown"
	}
	for _, key := range []string{"model name", "Model", "CPU part"} {
		for _, line := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == key && strings.TrimSpace(v) != "" {
				return strings.Join(strings.Fields(v), " ")
			}
		}
	}
	return "unknown"
}

// readSMT returns whether simultaneous multithreading is on: "on", "off",
// "not supported", or "unknown" when the kernel does not say
// (/sys/devices/system/cpu/smt).
func readSMT(fsys fs.FS) string {
	control, _ := readTrim(fsys, "sys/devices/system/cpu/smt/control")
	active, ok := readTrim(fsys, "sys/devices/system/cpu/smt/active")
	switch {
	case control == "notsupported" || control == "notimplemented":
		return "not supported"
	case ok && active == "1":
		return "on"
	case ok && active == "0":
		return "off"
	}
	return "unknown"
}

// readSiblings returns the CPUs sharing cpu's core, cpu included
// (topology/thread_siblings_list); nil when unknown.
func readSiblings(fsys fs.FS, cpu int) []int {
	l, ok := readTrim(fsys, cpuDir(cpu)+"/topology/thread_siblings_list")
	if !ok {
		return nil
	}
	return cpuListOrNil(l)
}

// areSiblings reports whether CPUs a and b are distinct hardware threads
// of one core, and whether the kernel said.
func areSiblings(fsys fs.FS, a, b int) (siblings, known bool) {
	sib := readSiblings(fsys, a)
	if sib == nil {
		return false, false
	}
	return a != b && slices.Contains(sib, b), true
}

// readCPUNUMANode returns the NUMA node of cpu (the nodeN entry in its sysfs
// directory), or -1 when unknown.
func readCPUNUMANode(fsys fs.FS, cpu int) int {
	entries, err := fs.ReadDir(fsys, cpuDir(cpu))
	if err != nil {
		return -1
	}
	for _, e := range entries {
		if num, ok := strings.CutPrefix(e.Name(), "node"); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return n
			}
		}
	}
	return -1
}

// readBoost returns whether the CPU may clock above its base frequency (Intel
// Turbo Boost, AMD Core Performance Boost): "on", "off", or "unknown".
// readBoost makes a core's speed depend on how busy its neighbours are.
func readBoost(fsys fs.FS, cpu int) string {
	if v, ok := readTrim(fsys, "sys/devices/system/cpu/intel_pstate/no_turbo"); ok {
		return onOff(v == "0")
	}
	for _, name := range []string{cpuDir(cpu) + "/cpufreq/boost", "sys/devices/system/cpu/cpufreq/boost"} {
		if v, ok := readTrim(fsys, name); ok {
			return onOff(v == "1")
		}
	}
	return "unknown"
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// readDeepestIdle returns the deepest idle state cpu may enter and its exit
// latency, like "C6 133us": the enabled state with the largest exit
// latency not above limitUS (the PM QoS latency limit in force, in
// microseconds; negative for none), because cpuidle governors skip states
// slower to leave than the limit. "no cpuidle" when the host exposes no
// states.
func readDeepestIdle(fsys fs.FS, cpu int, limitUS int) string {
	states := CPUIdleStates(fsys, cpu)
	if len(states) == 0 {
		return "no cpuidle"
	}
	s, ok := deepestIdle(states, limitUS)
	if !ok {
		return "none enabled"
	}
	return fmt.Sprintf("%s %dus", s.Name, s.ExitLatency)
}

func deepestIdle(states []IdleState, limitUS int) (IdleState, bool) {
	var deepest IdleState
	found := false
	for _, s := range states {
		if s.Disabled || (limitUS >= 0 && s.ExitLatency > limitUS) {
			continue
		}
		if !found || s.ExitLatency >= deepest.ExitLatency {
			deepest, found = s, true
		}
	}
	return deepest, found
}

// readIsolated returns the CPUs isolated from the scheduler (isolcpus=), in
// list form, or "none".
func readIsolated(fsys fs.FS) string { return cpuListFile(fsys, "sys/devices/system/cpu/isolated") }

// readNohzFull returns the CPUs running without the scheduler tick when they
// have one task (nohz_full=), in list form, or "none".
func readNohzFull(fsys fs.FS) string { return cpuListFile(fsys, "sys/devices/system/cpu/nohz_full") }

func cpuListFile(fsys fs.FS, name string) string {
	v, ok := readTrim(fsys, name)
	if !ok {
		return "unknown"
	}
	// The kernel prints "(null)" for an unset nohz_full mask.
	if cpus := cpuListOrNil(v); len(cpus) > 0 {
		return env.FormatCPUList(cpus)
	}
	return "none"
}

// OnlineCPUs returns the CPUs the kernel has online; nil when unknown.
func OnlineCPUs(fsys fs.FS) []int {
	l, ok := readTrim(fsys, "sys/devices/system/cpu/online")
	if !ok {
		return nil
	}
	return cpuListOrNil(l)
}

// cpuListOrNil reads a CPU list the kernel wrote; nil, unknown, when it
// is not one.
func cpuListOrNil(s string) []int {
	cpus, err := env.ParseCPUList(s)
	if err != nil {
		return nil
	}
	return cpus
}
