package hostinfo

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// Options says what Collect reports on. The zero value describes this
// host with no device and no pinned CPUs.
type Options struct {
	// FS is the file system rooted at "/" to read; nil means Root.
	FS fs.FS
	// Device is the RDMA device measured, like "mlx5_0"; "" leaves out
	// the device's lines and checks.
	Device string
	// CPUs are the measuring CPUs: the initiator's, then the responder's
	// when it runs on this host (loopback); none when unpinned.
	CPUs []int
	// GOMAXPROCS as the benchmarks run with it; 0 means
	// runtime.GOMAXPROCS(0) now (call Collect outside a run that lowers
	// it).
	GOMAXPROCS int
	// Getenv reads GODEBUG; nil means os.Getenv.
	Getenv func(string) string
	// Clock is what a clock read costs on this host, the measurement the
	// clocksource warning rests on; nil means measure it now when FS is
	// nil (this host), and no figure and no warning otherwise.
	Clock *ClockCost
}

// Line is one configuration line: a stable lower-case key and a value
// that does not change between runs on one host unless the host's setup
// does.
type Line struct{ Key, Value string }

// String returns the line as benchmark output carries it, "key: value".
func (l Line) String() string { return l.Key + ": " + l.Value }

// Report is what Collect found: configuration lines for benchmark output,
// measured notes, and the warnings about what distorts latency on this
// host.
type Report struct {
	Lines []Line
	// Notes are measurements (host-cpu-contention): they differ from run
	// to run, so they are written as "#" lines, which benchstat skips; as
	// configuration lines they would split its tables by their values.
	Notes    []Line
	Warnings []Warning
}

// FormatNote returns a note as a "#" line for benchmark output.
func FormatNote(l Line) string { return "# " + l.String() + "\n" }

// Write writes the configuration lines, then the notes and the warnings.
// All are safe in benchmark output: benchstat labels results with the
// lines and skips the rest. Call it from TestMain or a parent benchmark
// before b.Run, once per run.
func (r Report) Write(w io.Writer) error {
	var b strings.Builder
	for _, l := range r.Lines {
		b.WriteString(l.String() + "\n")
	}
	for _, l := range r.Notes {
		b.WriteString(FormatNote(l))
	}
	for _, warn := range r.Warnings {
		b.WriteString(warn.Format())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// facts is what one Collect read, shared by the lines and the checks.
type facts struct {
	fsys     fs.FS
	device   string
	cpus     []int
	pmqos    int // microseconds; -1 none or unknown
	pmqosOK  bool
	cmdline  func(string) (string, bool)
	idle     map[int][]IdleState
	devNode  int
	cpuNodes map[int]int
	irqs     []IRQ
	getenv   func(string) string
	// hostContention is the VM host's cpu-contention line, which rxevm
	// measured before the boot and passed in env.VarHostCPUContention.
	hostContention string
	clock          *ClockCost // nil: not measured
}

// Collect reads the host and returns its configuration lines, in a fixed
// order, and its warnings. It never fails: what it cannot read it reports
// as "unknown" (or "no cpufreq", "no cpuidle") and does not warn about.
func Collect(o Options) Report {
	f := facts{fsys: o.FS, device: o.Device, idle: map[int][]IdleState{}, cpuNodes: map[int]int{}}
	if f.fsys == nil {
		f.fsys = Root
	}
	f.cpus = o.CPUs
	f.pmqos, f.pmqosOK = PMQoSLimit(f.fsys)
	if !f.pmqosOK {
		f.pmqos = -1
	}
	f.cmdline = func(name string) (string, bool) { return readCmdlineParam(f.fsys, name) }
	f.getenv = o.Getenv
	if f.getenv == nil {
		f.getenv = os.Getenv
	}
	f.hostContention = strings.Join(strings.Fields(f.getenv(env.VarHostCPUContention)), " ")
	for _, c := range f.cpus {
		f.idle[c] = CPUIdleStates(f.fsys, c)
		f.cpuNodes[c] = readCPUNUMANode(f.fsys, c)
	}
	f.devNode = -1
	if f.device != "" {
		f.devNode = readDeviceNUMANode(f.fsys, f.device)
		f.irqs = DeviceIRQs(f.fsys, f.device)
	}
	f.clock = o.Clock
	if f.clock == nil && o.FS == nil {
		c := MeasureClockCost()
		f.clock = &c
	}
	r := Report{Lines: f.lines(o), Warnings: f.checks()}
	if f.hostContention != "" {
		r.Notes = append(r.Notes, Line{"host-cpu-contention", f.hostContention})
	}
	if f.clock != nil {
		r.Notes = append(r.Notes, Line{"clock-read", f.clock.String()})
	}
	return r
}

func (f *facts) lines(o Options) []Line {
	fsys := f.fsys
	perCPU := func(v func(int) string) string {
		if len(f.cpus) == 0 {
			return "unpinned"
		}
		return joinCollapsed(f.cpus, v)
	}
	node := func(n int) string {
		if n < 0 {
			return "unknown"
		}
		return strconv.Itoa(n)
	}
	siblings := "unpinned"
	switch len(f.cpus) {
	case 1:
		siblings = "one cpu"
	case 2:
		switch sib, known := areSiblings(fsys, f.cpus[0], f.cpus[1]); {
		case !known:
			siblings = "unknown"
		case sib:
			siblings = "yes"
		default:
			siblings = "no"
		}
	}
	maxprocs := o.GOMAXPROCS
	if maxprocs == 0 {
		maxprocs = runtime.GOMAXPROCS(0)
	}
	godebug := f.getenv("GODEBUG")
	if godebug == "" {
		godebug = "none"
	}
	lines := []Line{
		{"cpu-model", readCPUModel(fsys)},
		{"cpu-smt", readSMT(fsys)},
		{"cpu-smt-siblings", siblings},
		{"cpu-numa-node", perCPU(func(c int) string { return node(f.cpuNodes[c]) })},
		{"cpu-governor", perCPU(func(c int) string { return readGovernor(fsys, c) })},
		{"cpu-boost", perCPU(func(c int) string { return readBoost(fsys, c) })},
		{"cpu-idle", perCPU(func(c int) string { return readIdleStates(fsys, c) })},
		{"cpu-idle-deepest", perCPU(func(c int) string { return readDeepestIdle(fsys, c, f.pmqos) })},
		{"cpu-idle-driver", readCPUIdleDriver(fsys)},
		{"pm-qos", PMQoS(fsys)},
		{"cpu-isolated", readIsolated(fsys)},
		{"cpu-nohz-full", readNohzFull(fsys)},
	}
	if f.device != "" {
		devNode := "none"
		if f.devNode >= 0 {
			devNode = strconv.Itoa(f.devNode)
		}
		lines = append(lines,
			Line{"irq-affinity", readIRQAffinity(fsys, f.device)},
			Line{"rdma-numa-node", devNode},
			Line{"rdma-driver", readDeviceDriver(fsys, f.device)},
		)
	}
	lines = append(lines,
		Line{"rdma-core", readRDMACore(fsys)},
		Line{"clocksource", readClocksource(fsys)},
		Line{"transparent-hugepage", readTransparentHugepage(fsys)},
		Line{"virtualization", readVirtualization(fsys)},
		Line{"kernel", readKernel(fsys)},
		Line{"go-version", runtime.Version()},
		Line{"go-maxprocs", strconv.Itoa(maxprocs)},
		Line{"go-debug", godebug},
	)
	for i, l := range lines {
		// One line each, never empty: benchfmt's rules for a value.
		lines[i].Value = strings.Join(strings.Fields(l.Value), " ")
		if lines[i].Value == "" {
			lines[i].Value = "unknown"
		}
	}
	return lines
}

func cpuWord(cpus []int) string {
	if len(cpus) == 1 {
		return fmt.Sprintf("CPU %d", cpus[0])
	}
	return "CPUs " + env.FormatCPUList(cpus)
}
