package hostinfo

import (
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

func ibDir(dev string) string { return "sys/class/infiniband/" + dev }

// IRQ is one interrupt line of a device and the CPUs it may be delivered
// to (/proc/irq/N/smp_affinity_list) and is delivered to now
// (effective_affinity_list, nil where the kernel does not say).
type IRQ struct {
	N         int
	Affinity  []int
	Effective []int
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
		if l, ok := readTrim(fsys, "proc/irq/"+e.Name()+"/smp_affinity_list"); ok {
			irq.Affinity = ParseCPUList(l)
		}
		if l, ok := readTrim(fsys, "proc/irq/"+e.Name()+"/effective_affinity_list"); ok {
			irq.Effective = ParseCPUList(l)
		}
		irqs = append(irqs, irq)
	}
	slices.SortFunc(irqs, func(a, b IRQ) int { return a.N - b.N })
	return irqs
}

// DeviceNUMANode returns the NUMA node of RDMA device dev's PCI function,
// or -1 when it has none (one-node hosts, virtual devices) or it is
// unknown. Equivalent to cat /sys/class/infiniband/DEV/device/numa_node.
func DeviceNUMANode(fsys fs.FS, dev string) int {
	if n, ok := readInt(fsys, ibDir(dev)+"/device/numa_node"); ok && n >= 0 {
		return n
	}
	return -1
}

// softDrivers are the kernel modules of software RDMA devices, which have
// no PCI function (and so no device/driver link) but a parent netdev.
var softDrivers = []struct{ module, prefix string }{{"rdma_rxe", "rxe"}, {"siw", "siw"}}

// DeviceDriver returns the kernel driver of RDMA device dev, like
// "mlx5_core", followed by the module's version where the module states
// one (out-of-tree drivers such as MLNX_OFED's do: "mlx5_core 24.10-1.1.4").
// Software devices have no PCI function: for them it names the loaded
// soft-RoCE or soft-iWARP module ("rdma_rxe"). "unknown" when it cannot
// tell.
func DeviceDriver(fsys fs.FS, dev string) string {
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

// RDMACore returns the rdma-core version of the libibverbs this host
// would load, like "44.0". rdma-core names the library
// libibverbs.so.1.ABI.VERSION (libibverbs.so.1.14.44.0 is rdma-core 44.0),
// so the version is read from the file that libibverbs.so.1 links to: the
// copy this process has mapped when it has one (proc/self/maps), else the
// first found in the usual library directories. "unknown" when none is
// found.
func RDMACore(fsys fs.FS) string {
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

// FirstDevice returns the first RDMA device in sysfs, by name, with a port
// whose state is ACTIVE; "" when there is none. It matches the default of
// the benchmarks (the first device with an active port) without needing
// libibverbs.
func FirstDevice(fsys fs.FS) string {
	entries, err := fs.ReadDir(fsys, "sys/class/infiniband")
	if err != nil {
		return ""
	}
	for _, e := range entries {
		ports, err := fs.ReadDir(fsys, ibDir(e.Name())+"/ports")
		if err != nil {
			continue
		}
		for _, p := range ports {
			if st, _ := readTrim(fsys, ibDir(e.Name())+"/ports/"+p.Name()+"/state"); strings.Contains(st, "ACTIVE") {
				return e.Name()
			}
		}
	}
	return ""
}
