package hostinfo

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// Contention is what internal/cpuprobe measures of two or more CPUs: how
// much slower a busy loop runs on each with all of them busy than alone,
// and how unsteady its speed is from one 5 ms block to the next. On a
// host whose CPUs share a core (hyperthreads) or a hypervisor's time, two
// busy-polling threads run at a speed that changes every few hundred
// milliseconds, and latency switches between levels with it.
type Contention struct {
	CPUs     []int
	Slowdown float64 // median block time with all busy over the median alone, the worst CPU's
	Unsteady float64 // 90th percentile block time over the median, the worst CPU's and phase's
	Worst    float64 // slowest block with all busy over the median alone
}

// ContentionThreshold is the slowdown or unsteadiness above which the
// contention checks warn: 15% is well above what two real cores cost each
// other in a loop that touches no memory (nothing) and below the 1.2x to
// 2.5x seen on this project's 2-CPU cloud machines.
const ContentionThreshold = 1.15

// The host's Contention (its String) travels into a VM in
// env.VarHostCPUContention: rxevm measures it before the boot, and Collect
// notes it as host-cpu-contention and warns from it, because the guest
// cannot see how its host's CPUs are shared.

const contentionFormat = "%fx with all busy, p90 %fx the median, worst %fx; CPUs %s"

// String is the form notes carry and ParseContention reads:
// "1.62x with all busy, p90 1.20x the median, worst 2.50x; CPUs 0-1".
func (c Contention) String() string {
	return fmt.Sprintf("%.2fx with all busy, p90 %.2fx the median, worst %.2fx; CPUs %s", c.Slowdown, c.Unsteady, c.Worst, env.FormatCPUList(c.CPUs))
}

// ParseContention reads String's form back.
func ParseContention(s string) (Contention, error) {
	var c Contention
	var cpus string
	if _, err := fmt.Sscanf(s, contentionFormat, &c.Slowdown, &c.Unsteady, &c.Worst, &cpus); err != nil {
		return Contention{}, fmt.Errorf("cpu contention %q: want the form %q: %w", s, Contention{Slowdown: 1, Unsteady: 1, Worst: 1, CPUs: []int{0, 1}}.String(), err)
	}
	var err error
	if c.CPUs, err = env.ParseCPUList(cpus); err != nil {
		return Contention{}, fmt.Errorf("cpu contention %q: %w", s, err)
	}
	return c, nil
}

// Warning returns the warning named check when the CPUs slow each other
// or run unsteadily by more than ContentionThreshold. where names them:
// "CPUs 0-1", "the VM's host CPUs 0-1".
func (c Contention) Warning(check, where string) (Warning, bool) {
	var what []string
	if c.Slowdown > ContentionThreshold {
		what = append(what, fmt.Sprintf("run a busy loop %.2fx slower with all busy than alone (worst block %.2fx)", c.Slowdown, c.Worst))
	}
	if c.Unsteady > ContentionThreshold {
		what = append(what, fmt.Sprintf("vary in speed from one 5 ms block of it to the next (p90 %.2fx the median)", c.Unsteady))
	}
	if len(what) == 0 {
		return Warning{}, false
	}
	return Warning{
		Check: check,
		Problem: where + " " + strings.Join(what, " and ") + ": they share a core (hyperthreads) or a hypervisor's time, " +
			"and latency switches between a fast and a slow level with them, within a run and between runs",
		Fix: "measure on CPUs of two physical cores (RDMABENCH_CPUS) or on bare metal; where you cannot, " +
			"compare only interleaved runs (make compare-commits) and judge min with 30 or more pairs",
	}, true
}
