package env

// CPU placement, the whole rule: where a busy-polling thread runs (CPU),
// the one reading of a CPU list, the default choice, and the check of a
// choice against the CPUs this process may use. cpus_linux.go makes the
// affinity calls (reading the mask, pinning a thread, moving the others).

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// CPU is where one busy-polling thread runs: pinned to one CPU, or not
// pinned. The zero CPU is not pinned; PinTo(0) is CPU 0.
type CPU struct {
	id     int
	pinned bool
}

// PinTo returns the CPU that pins a thread to CPU id. A negative id is a
// programming error: an unpinned thread is the zero CPU.
func PinTo(id int) CPU {
	if id < 0 {
		panic(fmt.Sprintf("env.PinTo(%d): CPU numbers are not negative; the zero CPU is unpinned", id))
	}
	return CPU{id: id, pinned: true}
}

// ID returns the CPU number and true, or false when c is not pinned.
func (c CPU) ID() (id int, pinned bool) { return c.id, c.pinned }

// Pinned reports whether c pins its thread.
func (c CPU) Pinned() bool { return c.pinned }

// String returns the CPU number, or "unpinned".
func (c CPU) String() string {
	if !c.pinned {
		return "unpinned"
	}
	return strconv.Itoa(c.id)
}

// FormatCPUs returns the CPUs that pin, in the kernel's list form, or
// "unpinned" when none does: the rdmabench-cpus configuration line.
func FormatCPUs(cpus ...CPU) string {
	var ids []int
	for _, c := range cpus {
		if c.pinned {
			ids = append(ids, c.id)
		}
	}
	if len(ids) == 0 {
		return "unpinned"
	}
	return FormatCPUList(ids)
}

// maxCPU is the largest CPU number a list may name: the kernel's largest
// NR_CPUS (CONFIG_MAXSMP) is 8192. It bounds what a hostile "0-4000000000"
// could make a reader allocate.
const maxCPU = 8191

// ErrCPUList matches every error of ParseCPUList.
var ErrCPUList = errors.New("not a CPU list")

// errCPURepeated is ParseCPUList's error for a CPU named twice.
var errCPURepeated = fmt.Errorf("%w: a CPU named twice", ErrCPUList)

// ParseCPUList parses a CPU list in the kernel's form (cpuset(7), taskset
// -c, /sys/devices/system/cpu/online): numbers and ranges separated by
// commas, "0-3,8", kept in the order given. Spaces around items are
// allowed; an empty list is nil. A CPU named twice, a range that runs
// backwards, or a number above 8191 (the kernel's largest NR_CPUS) is an
// error matching ErrCPUList. It is the one reader of CPU lists: the
// variables, the flags and sysfs.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	seen := map[int]bool{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := parseCPUNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrCPUList, item, err)
		}
		b := a
		if isRange {
			if b, err = parseCPUNumber(hi); err != nil {
				return nil, fmt.Errorf("%w: %q: %v", ErrCPUList, item, err)
			}
			if b < a {
				return nil, fmt.Errorf("%w: %q runs backwards (write %d-%d)", ErrCPUList, item, b, a)
			}
		}
		for c := a; c <= b; c++ {
			if seen[c] {
				return nil, fmt.Errorf("%w (CPU %d)", errCPURepeated, c)
			}
			seen[c] = true
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func parseCPUNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	switch {
	case err != nil || n < 0:
		return 0, fmt.Errorf("%q is not a CPU number", s)
	case n > maxCPU:
		return 0, fmt.Errorf("CPU %d is above %d, the most a kernel has", n, maxCPU)
	}
	return n, nil
}

// FormatCPUList writes CPUs in the kernel's list form, "0-3,8".
func FormatCPUList(cpus []int) string {
	cpus = slices.Clone(cpus)
	slices.Sort(cpus)
	cpus = slices.Compact(cpus)
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseCPUs parses a CPU choice for the two busy-polling threads given as
// name (a variable or a flag, named in the error): "A,B" (initiator,
// responder), "A", "none" (none: true), or empty for the default (nil,
// false). The two CPUs must differ: two busy-polling threads on one CPU
// starve each other.
func ParseCPUs(name, v string) (cpus []int, none bool, err error) {
	v = strings.TrimSpace(v)
	switch v {
	case "":
		return nil, false, nil
	case "none":
		return nil, true, nil
	}
	cpus, err = ParseCPUList(v)
	switch {
	case errors.Is(err, errCPURepeated):
		return nil, false, fmt.Errorf("%s=%q pins both busy-polling threads to one CPU, which starves one of them; name two CPUs", name, v)
	case err != nil:
		return nil, false, fmt.Errorf("%s=%q: %v (example: %s=2,3 pins the initiator to CPU 2 and the responder to 3; %s=none disables pinning)", name, v, err, name, name)
	case len(cpus) > 2:
		return nil, false, fmt.Errorf("%s=%q names %d CPUs; give one (initiator) or two (initiator,responder)", name, v, len(cpus))
	}
	return cpus, false, nil
}

// DefaultCPUs returns the CPUs the benchmarks pin to when RDMABENCH_CPUS
// is unset: the last two this process may run on (initiator, responder),
// away from CPU 0 where housekeeping and interrupts tend to land; fewer
// when fewer are allowed. rdmapeer's answering thread takes the last, the
// responder's.
func DefaultCPUs() ([]int, error) {
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, err
	}
	return lastTwo(allowed), nil
}

func lastTwo(allowed []int) []int { return allowed[max(0, len(allowed)-2):] }

// PinCPUs resolves the initiator's and the loopback responder's CPUs from
// c.CPUs, c.NoPin and DefaultCPUs. The two busy-polling threads need two
// distinct CPUs; in two-node mode (c.Peer set) with no CPUs named, an
// initiator that cannot have them runs unpinned.
func (c Config) PinCPUs() ([2]CPU, error) { return c.PinCPUsAt(Placement{}) }

// PinCPUsAt is PinCPUs with the NUMA placement of the run (Place): the
// CPUs not named are the last two of pl.CPUs, the device's node, when it
// has two this process may use, else the last two allowed (a "numa"
// warning of hostinfo then says they are far from the device).
func (c Config) PinCPUsAt(pl Placement) ([2]CPU, error) {
	switch {
	case c.NoPin:
		return [2]CPU{}, nil
	case len(c.CPUs) == 2:
		return [2]CPU{PinTo(c.CPUs[0]), PinTo(c.CPUs[1])}, nil
	}
	allowed, err := AllowedCPUs()
	if err == nil {
		var cpus [2]CPU
		if cpus, err = pinFrom(c.CPUs, allowed, pl.CPUs); err == nil {
			return cpus, nil
		}
	}
	if c.Peer != "" && len(c.CPUs) == 0 {
		return [2]CPU{}, nil
	}
	return [2]CPU{}, err
}

// pinFrom is PinCPUs for named (none or one CPU), the allowed CPUs and
// those of the run's NUMA node (local, a subset of allowed).
func pinFrom(named, allowed, local []int) ([2]CPU, error) {
	def := lastTwo(allowed)
	if len(local) >= 2 {
		def = lastTwo(local)
	}
	if len(def) < 2 {
		return [2]CPU{}, fmt.Errorf("loopback needs two CPUs for its two busy-polling threads, this process may use %s (set %s=none to run unpinned anyway)", FormatCPUList(allowed), VarCPUs)
	}
	cpus := [2]int{def[0], def[1]}
	if len(named) == 1 {
		cpus[0] = named[0]
		if cpus[1] == cpus[0] {
			cpus[1] = def[0] // the other of the last two
		}
	}
	return [2]CPU{PinTo(cpus[0]), PinTo(cpus[1])}, nil
}

// CheckCPUs fails when a CPU of cpus, named by setting (a variable or a
// flag such as rdmapeer's -cpu), is not among those this process may run
// on, saying which it may use and what to type. The CPUs the kernel keeps
// out of every default mask (isolcpus=, /sys/devices/system/cpu/isolated)
// count as usable: they are the quiet ones people choose for measuring, and
// a thread may still be pinned there although no inherited mask has them.
func CheckCPUs(setting string, cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		return fmt.Errorf("%s=%s: %w", setting, joinInts(cpus), err)
	}
	return checkCPUs(setting, cpus, allowed, isolatedCPUs())
}

// isolatedPath is the kernel's list of isolated CPUs (a variable for tests
// on a fake sysfs).
var isolatedPath = "/sys/devices/system/cpu/isolated"

// isolatedCPUs returns the CPUs the kernel isolates from the scheduler's
// balancing and from default affinity masks (the isolcpus= boot option),
// or nil when none are, or when the list cannot be read (not Linux).
func isolatedCPUs() []int {
	b, err := os.ReadFile(isolatedPath)
	if err != nil {
		return nil
	}
	cpus, err := ParseCPUList(string(b))
	if err != nil {
		return nil
	}
	return cpus
}

// checkCPUs is CheckCPUs against the allowed and the isolated CPUs,
// suggesting the default choice (the last allowed).
func checkCPUs(setting string, cpus, allowed, isolated []int) error {
	var bad []int
	for _, n := range cpus {
		if !slices.Contains(allowed, n) && !slices.Contains(isolated, n) {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	may := FormatCPUList(allowed)
	if len(isolated) > 0 {
		may += " and the isolated " + FormatCPUList(isolated)
	}
	example := allowed[max(0, len(allowed)-len(cpus)):]
	return fmt.Errorf("%s=%s: this process may run on CPUs %s; e.g. %s=%s or none", setting, joinInts(cpus), may, setting, joinInts(example))
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
