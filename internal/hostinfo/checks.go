package hostinfo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// Warning is one thing about the host that distorts latency, with what to
// do about it. Check is a stable name for it (docs/host.md explains each):
// "cpu-idle", "cpu-governor", "irq", "numa", "smt", "clocksource", "vm",
// "host-cpu-contention" (here), "cpu-contention" (internal/cpuprobe).
type Warning struct {
	Check   string
	Problem string // what is wrong, with the values seen
	Fix     string // what to do
}

// String returns the warning on one line.
func (w Warning) String() string {
	return fmt.Sprintf("warning (%s): %s; fix: %s", w.Check, w.Problem, w.Fix)
}

// Format returns the warning as two lines starting with "#", for benchmark
// output: benchfmt treats a line as configuration only when it starts with
// a lower-case letter and as a result only when it starts with
// "Benchmark", so benchstat skips these without complaint.
func (w Warning) Format() string {
	return fmt.Sprintf("# warning (%s): %s\n#   fix: %s\n", w.Check, w.Problem, w.Fix)
}

func (f *facts) checks() []Warning {
	var ws []Warning
	add := func(check, problem, fix string) {
		ws = append(ws, Warning{check, problem, fix})
	}
	if len(f.cpus) > 0 {
		f.checkIdle(add)
		f.checkGovernor(add)
	}
	f.checkIRQs(add)
	f.checkNUMA(add)
	if len(f.cpus) == 2 {
		if sib, _ := areSiblings(f.fsys, f.cpus[0], f.cpus[1]); sib {
			add("smt", fmt.Sprintf("initiator CPU %d and responder CPU %d are SMT siblings of one core: the two busy-polling threads share its execution units", f.cpus[0], f.cpus[1]),
				"pin them to different cores with RDMABENCH_CPUS=A,B (a CPU's siblings: /sys/devices/system/cpu/cpuN/topology/thread_siblings_list)")
		}
	}
	if f.clock != nil && f.clock.Slow() {
		add("clocksource", fmt.Sprintf("a clock read costs %s, measured here, with clocksource %s: each read enters the kernel, and each sample pays for it", f.clock, readClocksource(f.fsys)),
			"find why the kernel gave up the TSC (dmesg | grep -i tsc); boot with clocksource=tsc, or tsc=reliable in a VM whose host has an invariant TSC")
	}
	if v := readVirtualization(f.fsys); v != "none" {
		which := " (" + v + ")"
		if v == "hypervisor" {
			which = "" // the CPU says there is one, not which
		}
		add("vm", fmt.Sprintf("running under a hypervisor%s: vCPU scheduling and virtual timers and interrupts add latency, and results drift between boots", which),
			"compare only results taken in one boot, interleaved (make compare does); pin the vCPUs on the host; measure on bare metal for absolute figures")
	}
	f.checkHostContention(add)
	return ws
}

// checkHostContention warns from the host's contention, as rxevm passed it.
func (f *facts) checkHostContention(add func(check, problem, fix string)) {
	c, err := ParseContention(f.hostContention)
	if err != nil {
		return
	}
	if w, ok := c.Warning("host-cpu-contention", "the VM's host CPUs "+env.FormatCPUList(c.CPUs)+", which run its measuring vCPUs,"); ok {
		add(w.Check, w.Problem, w.Fix)
	}
}

func (f *facts) checkIdle(add func(check, problem, fix string)) {
	var noDriver []int
	deep := groupCPUs(f.cpus, func(c int) string {
		states := f.idle[c]
		if len(states) == 0 {
			noDriver = append(noDriver, c)
			return ""
		}
		if s, ok := deepestIdle(states, f.pmqos); ok && s.ExitLatency > 0 {
			return fmt.Sprintf("may enter %s (exit latency %d us)", s.Name, s.ExitLatency)
		}
		return ""
	})
	if len(deep) > 0 {
		add("cpu-idle", strings.Join(deep, ", ")+": a measuring CPU that idles (between chunks, waiting for an event, or its core's sibling) wakes that much later",
			"hold PM QoS at 0 while measuring (RDMABENCH_PMQOS=1, or run under rdmatune hold -- CMD as root), or disable the states as root with rdmatune apply (undo: rdmatune restore); for good: boot with idle=poll or intel_idle.max_cstate=0 processor.max_cstate=1")
	}
	// Without a cpuidle driver the kernel halts idle CPUs (HLT), which
	// neither sysfs nor PM QoS can prevent; say so only when the kernel
	// says there is no driver, not when the files are merely absent.
	if _, poll := f.cmdline("idle"); len(noDriver) > 0 && readCPUIdleDriver(f.fsys) == "none" && !poll {
		add("cpu-idle", fmt.Sprintf("no cpuidle driver: idle %s halt (HLT), which neither sysfs nor PM QoS can prevent", cpuWord(noDriver)),
			"boot with idle=poll to keep idle CPUs polling (at the cost of power); in a KVM guest, cpuidle_haltpoll polls before halting")
	}
}

func (f *facts) checkGovernor(add func(check, problem, fix string)) {
	byGov := map[string][]int{}
	for _, c := range f.cpus {
		if g := readGovernor(f.fsys, c); g != "no cpufreq" && g != "performance" {
			byGov[g] = append(byGov[g], c)
		}
	}
	for _, g := range sortedKeys(byGov) {
		cpus := byGov[g]
		add("cpu-governor", fmt.Sprintf("cpufreq governor %s on %s: the clock speed follows load, so latency depends on how long the loop has spun", g, cpuWord(cpus)),
			fmt.Sprintf("set the performance governor as root: rdmatune apply (undo: rdmatune restore), or sudo cpupower -c %s frequency-set -g performance", env.FormatCPUList(cpus)))
	}
}

func (f *facts) checkIRQs(add func(check, problem, fix string)) {
	if len(f.cpus) == 0 {
		return
	}
	// Count the completion vectors where their names tell them apart;
	// else every vector of the function, and say so.
	irqs, what, counted := f.irqs, "interrupts", "every MSI vector of its PCI function counted: their names do not tell which serve completion queues"
	var comp []IRQ
	for _, irq := range f.irqs {
		if irq.Completion() {
			comp = append(comp, irq)
		}
	}
	if len(comp) > 0 {
		irqs, what, counted = comp, "completion interrupts", fmt.Sprintf("of %d MSI vectors of its PCI function", len(f.irqs))
	}
	var hit []string
	var on []int
	for _, irq := range irqs {
		for _, c := range irq.Landing() {
			if slices.Contains(f.cpus, c) {
				hit = append(hit, fmt.Sprint(irq.N))
				on = append(on, c)
				break
			}
		}
	}
	if len(hit) == 0 {
		return
	}
	add("irq", fmt.Sprintf("%d of %s's %d %s (irq %s; %s) may land on measuring %s: each one steals the polling CPU", len(hit), f.device, len(irqs), what, strings.Join(hit, ","), counted, cpuWord(sortedCPUs(on))),
		"move them off as root: rdmatune apply (undo: rdmatune restore), or stop irqbalance and write other CPUs to /proc/irq/N/smp_affinity_list; or pin the benchmark elsewhere with RDMABENCH_CPUS")
}

func (f *facts) checkNUMA(add func(check, problem, fix string)) {
	if f.devNode < 0 {
		return
	}
	far := groupCPUs(f.cpus, func(c int) string {
		if n := f.cpuNodes[c]; n >= 0 && n != f.devNode {
			return fmt.Sprintf("on node %d", n)
		}
		return ""
	})
	if len(far) == 0 {
		return
	}
	local, _ := readTrim(f.fsys, fmt.Sprintf("sys/devices/system/node/node%d/cpulist", f.devNode))
	if local == "" {
		local = "unknown"
	}
	add("numa", fmt.Sprintf("%s is on NUMA node %d but measuring %s: completions and buffers cross the interconnect", f.device, f.devNode, strings.Join(far, ", ")),
		fmt.Sprintf("pin to CPUs of node %d (%s) with RDMABENCH_CPUS=A,B, or unset RDMABENCH_CPUS: by default (RDMABENCH_NUMA=device) the benchmarks take two of them", f.devNode, local))
}

// groupCPUs describes cpus grouped by desc(cpu), in order of first
// appearance, like "CPUs 2-3 may enter C6"; a CPU whose desc is "" is left
// out.
func groupCPUs(cpus []int, desc func(int) string) []string {
	var order []string
	groups := map[string][]int{}
	for _, c := range cpus {
		d := desc(c)
		if d == "" {
			continue
		}
		if groups[d] == nil {
			order = append(order, d)
		}
		groups[d] = append(groups[d], c)
	}
	out := make([]string, len(order))
	for i, d := range order {
		out[i] = cpuWord(groups[d]) + " " + d
	}
	return out
}

// sortedCPUs returns cpus sorted and without duplicates.
func sortedCPUs(cpus []int) []int {
	cpus = slices.Clone(cpus)
	slices.Sort(cpus)
	return slices.Compact(cpus)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
