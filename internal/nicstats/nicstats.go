// Package nicstats reads an RDMA port's counters from sysfs and computes
// what changed over a run: the port counters (ports/N/counters, the
// InfiniBand PortCounters: packets, errors, discards) and the driver's
// hw_counters (retransmissions, out-of-sequence NAKs, RNR NAKs, congestion
// notifications on the NICs that count them; rxe's own set in the VM), as
// perftest 26.x reports them with -W. Pure Go; every read is bounded.
package nicstats

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SysfsRoot is where the kernel lists RDMA devices.
const SysfsRoot = "/sys/class/infiniband"

// Bounds on what one read takes: a counter file holds one decimal number;
// a port has some tens of counters (rxe 15 hw_counters, mlx5 about 60).
const (
	maxCounterBytes = 64
	maxCounters     = 512
)

// Kinds of counter, the directory each is read from.
const (
	KindPort = "counters"    // ports/N/counters
	KindHW   = "hw_counters" // ports/N/hw_counters
)

// A Snapshot is every counter of one port at one moment, keyed by Name.
type Snapshot map[string]uint64

// Name is the key of a counter in a Snapshot and in a report: the file's
// name, with "hw." before a hw_counters one (a port counter and a
// hardware counter may share a name, such as link_downed on rxe).
func Name(kind, file string) string {
	if kind == KindHW {
		return "hw." + file
	}
	return file
}

// Read reads the counters of port of device dev under root (SysfsRoot on
// a real system). A directory that is missing is no error (a device may
// have no hw_counters); both missing is: the device or port is not there.
// A file that is not a decimal number (some drivers list write-only or
// binary entries) is left out.
func Read(root, dev string, port int) (Snapshot, error) {
	if dev == "" || strings.ContainsAny(dev, "/\x00") || dev == "." || dev == ".." {
		return nil, fmt.Errorf("nicstats: device name %q: want a name such as rxe0 or mlx5_0", dev)
	}
	if port < 1 || port > 255 {
		return nil, fmt.Errorf("nicstats: %s port %d: want 1..255", dev, port)
	}
	base := filepath.Join(root, dev, "ports", strconv.Itoa(port))
	s := Snapshot{}
	found := false
	for _, kind := range []string{KindPort, KindHW} {
		dir := filepath.Join(base, kind)
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("nicstats: %w", err)
		}
		found = true
		for _, e := range entries {
			if len(s) >= maxCounters {
				return nil, fmt.Errorf("nicstats: %s: more than %d counters", base, maxCounters)
			}
			if e.IsDir() {
				continue
			}
			v, ok := readCounter(filepath.Join(dir, e.Name()))
			if ok {
				s[Name(kind, e.Name())] = v
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("nicstats: %s port %d has no counters under %s: %w", dev, port, base, os.ErrNotExist)
	}
	return s, nil
}

// readCounter reads one counter file: a decimal number and a newline.
func readCounter(path string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCounterBytes+1))
	if err != nil || len(b) > maxCounterBytes {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

// A Change is one counter's increase over a run.
type Change struct {
	Name  string
	Delta uint64
}

// Diff returns the counters that increased from before to after, sorted
// by name. A counter that went down (reset, or a 32-bit port counter that
// wrapped or saturated) or that only one snapshot has is left out: its
// change is not known.
func Diff(before, after Snapshot) []Change {
	var out []Change
	for name, a := range after {
		b, ok := before[name]
		if !ok || a <= b {
			continue
		}
		out = append(out, Change{name, a - b})
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// Unit is the benchmark metric unit of a counter's change per operation,
// such as "hw.rcvd_seq_err/op". benchstat reads it as a metric of its own;
// no counter name holds "ns", so none is taken for a time.
func Unit(name string) string { return name + "/op" }
