package hostinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

func ibDir(dev string) string { return "sys/class/infiniband/" + dev }

// IRQ is one interrupt line of a device and the CPUs it may be delivered
// to (/proc/irq/N/smp_affinity_list) and is delivered to now
// (effective_affinity_list, nil where the kernel does not say).
type IRQ struct {
	N         int
	Name      string // the handler's name (/proc/irq/N/NAME): "mlx5_comp3@pci:0000:3b:00.0"; "" if unknown
	Affinity  []int
	Effective []int
}

// Completion reports whether the interrupt serves completion queues, by
// the name drivers give such vectors: mlx5_comp*, efa-comp*, irdma's and
// hns' CEQs, qedr's CNQs, bnxt_re's NQs. Only these fire for the
// completions a benchmark waits for (events mode); the other vectors of a
// function (commands, async events, the Ethernet queues) do not.
func (irq IRQ) Completion() bool {
	n := strings.ToLower(irq.Name)
	for _, k := range []string{"comp", "ceq", "cnq", "-nq", "_nq"} {
		if strings.Contains(n, k) {
			return true
		}
	}
	return false
}

// Landing returns the CPUs the interrupt lands on: the effective affinity
// when the kernel reports it, else every CPU it may be delivered to.
func (irq IRQ) Landing() []int {
	if len(irq.Effective) > 0 {
		return irq.Effective
	}
	return irq.Affinity
}

// DeviceIRQs returns the MSI interrupts of RDMA device dev's PCI function
// (sys/class/infiniband/DEV/device/msi_irqs) sorted by number; nil for a
// device without them, such as soft-RoCE.
func DeviceIRQs(fsys fs.FS, dev string) []IRQ {
	entries, err := fs.ReadDir(fsys, ibDir(dev)+"/device/msi_irqs")
	if err != nil {
		return nil
	}
	var irqs []IRQ
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		irq := IRQ{N: n}
		if ents, err := fs.ReadDir(fsys, "proc/irq/"+e.Name()); err == nil {
			for _, a := range ents {
				if a.IsDir() {
					irq.Name = a.Name()
					break
				}
			}
		}
		if l, ok := readTrim(fsys, "proc/irq/"+e.Name()+"/smp_affinity_list"); ok {
			irq.Affinity = cpuListOrNil(l)
		}
		if l, ok := readTrim(fsys, "proc/irq/"+e.Name()+"/effective_affinity_list"); ok {
			irq.Effective = cpuListOrNil(l)
		}
		irqs = append(irqs, irq)
	}
	slices.SortFunc(irqs, func(a, b IRQ) int { return a.N - b.N })
	return irqs
}

// readDeviceNUMANode returns the NUMA node of RDMA device dev's PCI function,
// or -1 when it has none (one-node hosts, virtual devices) or it is
// unknown. Equivalent to cat /sys/class/infiniband/DEV/device/numa_node.
// On a host with several nodes a software device (rxe) takes its netdev's
// node, as env's placement rule does (env.DeviceNode); on one node the
// rdma-numa-node line stays what it was.
func readDeviceNUMANode(fsys fs.FS, dev string) int {
	if n, ok := readInt(fsys, ibDir(dev)+"/device/numa_node"); ok && n >= 0 {
		return n
	}
	if len(env.OnlineNodes(fsys)) > 1 {
		return env.DeviceNode(fsys, dev)
	}
	return -1
}

// softDrivers are the kernel modules of software RDMA devices, which have
// no PCI function (and so no device/driver link) but a parent netdev.
var softDrivers = []struct{ module, prefix string }{{"rdma_rxe", "rxe"}, {"siw", "siw"}}

// readDeviceDriver returns the kernel driver of RDMA device dev, like
// "mlx5_core", followed by the module's version where the module states
// one (out-of-tree drivers such as MLNX_OFED's do: "mlx5_core 24.10-1.1.4").
// Software devices have no PCI function: for them it names the loaded
// soft-RoCE or soft-iWARP module ("rdma_rxe"). "unknown" when it cannot
// tell.
func readDeviceDriver(fsys fs.FS, dev string) string {
	driver := ""
	if target, err := fs.ReadLink(fsys, ibDir(dev)+"/device/driver"); err == nil {
		driver = path.Base(target)
	} else if _, ok := readTrim(fsys, ibDir(dev)+"/parent"); ok {
		var loaded []string
		for _, d := range softDrivers {
			if _, err := fs.Stat(fsys, "sys/module/"+d.module); err == nil {
				loaded = append(loaded, d.module)
				if strings.HasPrefix(dev, d.prefix) {
					driver = d.module
				}
			}
		}
		if driver == "" && len(loaded) == 1 {
			driver = loaded[0]
		}
	}
	if driver == "" {
		return "unknown"
	}
	if v, ok := readTrim(fsys, "sys/module/"+driver+"/version"); ok && v != "" {
		return driver + " " + v
	}
	return driver
}

// libDirs are where distributions install libibverbs.
var libDirs = []string{
	"usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib/powerpc64le-linux-gnu",
	"lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "usr/lib64", "lib64", "usr/lib", "lib",
}

// readRDMACore returns the rdma-core version of the libibverbs this host
// would load, like "44.0". rdma-core names the library
// libibverbs.so.1.ABI.VERSION (libibverbs.so.1.14.44.0 is rdma-core 44.0),
// so the version is read from the file that libibverbs.so.1 links to: the
// copy this process has mapped when it has one (proc/self/maps), else the
// first found in the usual library directories. "unknown" when none is
// found.
func readRDMACore(fsys fs.FS) string {
	if maps, ok := readTrim(fsys, "proc/self/maps"); ok {
		for _, line := range strings.Split(maps, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if v, ok := rdmaCoreOf(path.Base(f[len(f)-1])); ok {
				return v
			}
		}
	}
	for _, dir := range libDirs {
		name := dir + "/libibverbs.so.1"
		if target, err := fs.ReadLink(fsys, name); err == nil {
			if v, ok := rdmaCoreOf(path.Base(target)); ok {
				return v
			}
		}
	}
	return "unknown"
}

// rdmaCoreOf extracts the rdma-core version from a library file name of
// the form libibverbs.so.1.ABI.VERSION.
func rdmaCoreOf(file string) (string, bool) {
	rest, ok := strings.CutPrefix(file, "libibverbs.so.1.")
	if !ok {
		return "", false
	}
	_, version, ok := strings.Cut(rest, ".")
	if !ok || version == "" || (version[0] < '0' || version[0] > '9') {
		return "", false
	}
	return version, true
}

// SysfsProbe answers what package env's device rules ask (it is an
// env.Prober) from sysfs, without libibverbs: for tools that report on a
// device without opening it.
type SysfsProbe struct{ FS fs.FS }

// Devices returns the RDMA devices in sys/class/infiniband in libibverbs'
// order, which the benchmarks (and perftest without -d) take the first of:
// the kernel's registration order, not the names sorted (mlx5_10 sorts
// before mlx5_2 but registers after it). See deviceOrder.
func (p SysfsProbe) Devices() ([]string, error) {
	entries, err := fs.ReadDir(p.FS, "sys/class/infiniband")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return deviceOrder(p.FS, names), nil
}

// deviceOrder sorts RDMA device names as libibverbs lists them.
// libibverbs asks the kernel over netlink, which answers in device index
// order, the order of registration; sysfs does not show that index, but
// ib_uverbs numbers its character devices (sys/class/infiniband_verbs/
// uverbsN, whose ibdev file names the device) as devices register, so N
// gives the same order. Devices without one (no ib_uverbs loaded) come
// after, in natural order (a name's trailing number compared as a number),
// the order the kernel assigns such names in.
func deviceOrder(fsys fs.FS, names []string) []string {
	minor := map[string]int{}
	if ents, err := fs.ReadDir(fsys, "sys/class/infiniband_verbs"); err == nil {
		for _, e := range ents {
			n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "uverbs"))
			if err != nil || !strings.HasPrefix(e.Name(), "uverbs") {
				continue
			}
			if dev, ok := readTrim(fsys, "sys/class/infiniband_verbs/"+e.Name()+"/ibdev"); ok {
				minor[dev] = n
			}
		}
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		ma, oka := minor[a]
		mb, okb := minor[b]
		switch {
		case oka && okb:
			return ma - mb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return naturalCompare(a, b)
	})
	return out
}

// naturalCompare orders names by their stem, then by their trailing
// number as a number: mlx5_2 before mlx5_10.
func naturalCompare(a, b string) int {
	split := func(s string) (string, int, bool) {
		i := len(s)
		for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			i--
		}
		n, err := strconv.Atoi(s[i:])
		return s[:i], n, err == nil
	}
	sa, na, oka := split(a)
	sb, nb, okb := split(b)
	if sa != sb || !oka || !okb {
		return strings.Compare(a, b)
	}
	return na - nb
}

// Active returns nil when a port of device is in state ACTIVE.
func (p SysfsProbe) Active(device string) error {
	ports, err := fs.ReadDir(p.FS, ibDir(device)+"/ports")
	if err != nil {
		return err
	}
	for _, port := range ports {
		if st, _ := readTrim(p.FS, ibDir(device)+"/ports/"+port.Name()+"/state"); strings.Contains(st, "ACTIVE") {
			return nil
		}
	}
	return fmt.Errorf("%s has no ACTIVE port", device)
}

// PortCount returns how many ports sysfs lists for device.
func (p SysfsProbe) PortCount(device string) (int, error) {
	ports, err := fs.ReadDir(p.FS, ibDir(device)+"/ports")
	return len(ports), err
}

// firstDevice returns env's default device as sysfs shows it: the first
// by name with an ACTIVE port; "" when there is none.
func firstDevice(fsys fs.FS) string {
	name, _ := env.FirstActive(SysfsProbe{fsys})
	return name
}
