// Package tune changes the host settings that move RDMA latency, and puts
// them back: the measuring CPUs' cpufreq governor (to performance), their
// idle states (every state slower to leave than polling is disabled), and
// the RDMA device's interrupts (moved off the measuring CPUs). Every
// change is written to a state file, with the value it replaced, before it
// is made, so that Restore can undo it even after a crash.
//
// Paths are relative to a root directory, "/" on a real host; tests pass
// a directory holding a fake sysfs and /proc.
package tune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

// Change is one setting: the file written (relative to the root), the
// value it had and the value written.
type Change struct {
	What string `json:"what"` // for people, like "CPU 2 governor"
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

func (c Change) String() string { return fmt.Sprintf("%s: %s -> %s", c.What, c.Old, c.New) }

// Options says what to tune.
type Options struct {
	Root   string // "" means "/"
	CPUs   []int  // the measuring CPUs' numbers (as env.ParseCPUList reads -cpus)
	Device string // RDMA device whose interrupts to move; "" for none
	IRQs   []int  // more interrupts to move off the CPUs
}

// Plan is the changes to make, and the notes on what was left alone.
type Plan struct {
	Root    string   `json:"root"`
	Host    string   `json:"host,omitempty"`    // os.Hostname when applied
	BootID  string   `json:"boot_id,omitempty"` // the root's proc/sys/kernel/random/boot_id
	Changes []Change `json:"changes"`
	Notes   []string `json:"notes,omitempty"`
}

// NewPlan reads the host under o.Root and returns what Apply would change
// to tune it for o.CPUs. A setting the host does not have (no cpufreq in
// a VM, no interrupts of its own for soft-RoCE) becomes a note, not an
// error.
func NewPlan(o Options) (Plan, error) {
	p := Plan{Root: o.Root}
	if p.Root == "" {
		p.Root = "/"
	}
	cpus := o.CPUs
	if len(cpus) == 0 {
		return p, errors.New("tune: no measuring CPUs to tune for; name them (example: -cpus 2,3)")
	}
	for _, c := range cpus {
		if c < 0 {
			return p, fmt.Errorf("tune: %d is not a CPU number; name the measuring CPUs (example: -cpus 2,3)", c)
		}
	}
	fsys := os.DirFS(p.Root)
	for _, c := range cpus {
		p.planGovernor(fsys, c)
		p.planIdle(fsys, c)
	}
	irqs := slices.Clone(o.IRQs)
	if o.Device != "" {
		dev := hostinfo.DeviceIRQs(fsys, o.Device)
		if len(dev) == 0 {
			p.note("%s has no interrupts of its own (soft-RoCE rides on its netdev): none moved", o.Device)
		}
		for _, irq := range dev {
			irqs = append(irqs, irq.N)
		}
	}
	slices.Sort(irqs)
	online := hostinfo.OnlineCPUs(fsys)
	for _, n := range slices.Compact(irqs) {
		p.planIRQ(fsys, n, cpus, online)
	}
	return p, nil
}

func (p *Plan) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

func cpuDir(cpu int) string { return "sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) }

func (p *Plan) planGovernor(fsys fs.FS, cpu int) {
	name := cpuDir(cpu) + "/cpufreq/scaling_governor"
	old, err := readTrim(fsys, name)
	if err != nil {
		p.note("CPU %d has no cpufreq: governor left alone", cpu)
		return
	}
	if old == "performance" {
		return
	}
	if avail, err := readTrim(fsys, cpuDir(cpu)+"/cpufreq/scaling_available_governors"); err == nil && !slices.Contains(strings.Fields(avail), "performance") {
		p.note("CPU %d offers no performance governor (%s): left at %s", cpu, avail, old)
		return
	}
	p.Changes = append(p.Changes, Change{fmt.Sprintf("CPU %d governor", cpu), name, old, "performance"})
}

func (p *Plan) planIdle(fsys fs.FS, cpu int) {
	states := hostinfo.CPUIdleStates(fsys, cpu)
	if len(states) == 0 {
		p.note("CPU %d has no cpuidle states in sysfs: idle left alone (PM QoS or idle=poll can still keep it polling)", cpu)
		return
	}
	for _, s := range states {
		if s.Disabled || s.ExitLatency == 0 || (s.ExitLatency < 0 && s.Name == "POLL") {
			continue
		}
		name := fmt.Sprintf("%s/cpuidle/state%d/disable", cpuDir(cpu), s.Index)
		p.Changes = append(p.Changes, Change{fmt.Sprintf("CPU %d idle state %s (%d us) disable", cpu, s.Name, s.ExitLatency), name, "0", "1"})
	}
}

func (p *Plan) planIRQ(fsys fs.FS, n int, cpus, online []int) {
	name := fmt.Sprintf("proc/irq/%d/smp_affinity_list", n)
	old, err := readTrim(fsys, name)
	if err != nil {
		p.note("irq %d: %v", n, err)
		return
	}
	cur, err := env.ParseCPUList(old)
	if err != nil {
		p.note("irq %d: %s: %v", n, name, err)
		return
	}
	if !overlaps(cur, cpus) {
		return
	}
	rest := without(cur, cpus)
	if len(rest) == 0 {
		rest = without(online, cpus)
	}
	if len(rest) == 0 {
		p.note("irq %d: no online CPU besides %s to move it to", n, env.FormatCPUList(cpus))
		return
	}
	p.Changes = append(p.Changes, Change{fmt.Sprintf("irq %d affinity", n), name, old, env.FormatCPUList(rest)})
}

func overlaps(a, b []int) bool {
	return slices.ContainsFunc(a, func(c int) bool { return slices.Contains(b, c) })
}

func without(a, b []int) []int {
	return slices.DeleteFunc(slices.Clone(a), func(c int) bool { return slices.Contains(b, c) })
}
