package hostinfo

import (
	"encoding/binary"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// PMQoSNone is what /dev/cpu_dma_latency reads when no process holds a
// CPU latency request (PM_QOS_DEFAULT_VALUE, 2000 s).
const PMQoSNone = 2000000000

// PMQoSLimit returns the system-wide CPU wake-up latency limit in force,
// in microseconds, read from /dev/cpu_dma_latency (the aggregate of every
// open request: 0 keeps idle CPUs out of every state but polling). It
// returns -1 with ok true when no request is held, and ok false when the
// file cannot be read (it is root-only).
func PMQoSLimit(fsys fs.FS) (limitUS int, ok bool) {
	f, err := fsys.Open("dev/cpu_dma_latency")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, false
	}
	v := int32(binary.NativeEndian.Uint32(b[:]))
	if v >= PMQoSNone || v < 0 {
		return -1, true
	}
	return int(v), true
}

// PMQoS describes the CPU latency limit in force: "none", "0us" (held at
// zero, the modern "nohalt"), "20us", or "unknown (not readable)".
func PMQoS(fsys fs.FS) string {
	limit, ok := PMQoSLimit(fsys)
	switch {
	case !ok:
		return "unknown (not readable)"
	case limit < 0:
		return "none"
	}
	return strconv.Itoa(limit) + "us"
}

// readTransparentHugepage returns the THP mode in force ("always", "madvise",
// "never"), the bracketed word of
// /sys/kernel/mm/transparent_hugepage/enabled.
func readTransparentHugepage(fsys fs.FS) string {
	v, ok := readTrim(fsys, "sys/kernel/mm/transparent_hugepage/enabled")
	if !ok {
		return "unknown"
	}
	for _, w := range strings.Fields(v) {
		if len(w) > 2 && w[0] == '[' && w[len(w)-1] == ']' {
			return w[1 : len(w)-1]
		}
	}
	return v
}

// hypervisors maps DMI vendor or product names to a short name.
var hypervisors = []struct{ match, name string }{
	{"QEMU", "qemu"}, {"KVM", "kvm"}, {"VMware", "vmware"}, {"VirtualBox", "virtualbox"},
	{"innotek", "virtualbox"}, {"Xen", "xen"}, {"Microsoft Corporation Virtual Machine", "hyperv"},
	{"Amazon EC2", "amazon"}, {"Google Compute Engine", "google"}, {"OpenStack", "openstack"},
	{"Parallels", "parallels"}, {"BHYVE", "bhyve"}, {"Firecracker", "firecracker"},
}

// readVirtualization names the hypervisor this kernel runs under ("qemu",
// "kvm", "vmware", "xen", ...), "hypervisor" when the CPU says there is
// one but not which, or "none" on bare metal.
func readVirtualization(fsys fs.FS) string {
	vendor, _ := readTrim(fsys, "sys/class/dmi/id/sys_vendor")
	product, _ := readTrim(fsys, "sys/class/dmi/id/product_name")
	dmi := vendor + " " + product
	hyper := false
	if info, ok := readTrim(fsys, "proc/cpuinfo"); ok {
		for _, line := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == "flags" {
				hyper = slices.Contains(strings.Fields(v), "hypervisor")
				break
			}
		}
	}
	if t, ok := readTrim(fsys, "sys/hypervisor/type"); ok && t != "" {
		return t
	}
	for _, h := range hypervisors {
		if strings.Contains(dmi, h.match) {
			return h.name
		}
	}
	if hyper {
		return "hypervisor"
	}
	return "none"
}

// readCmdlineParam returns the value of kernel command-line parameter name
// ("" for a bare flag) and whether it is present.
func readCmdlineParam(fsys fs.FS, name string) (string, bool) {
	cmdline, _ := readTrim(fsys, "proc/cmdline")
	for _, f := range strings.Fields(cmdline) {
		if f == "--" {
			break // the rest goes to init
		}
		k, v, _ := strings.Cut(f, "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

// readCPUIdleDriver returns the cpuidle driver in use ("intel_idle",
// "acpi_idle", "haltpoll", "none"), or "unknown".
func readCPUIdleDriver(fsys fs.FS) string {
	if d, ok := readTrim(fsys, "sys/devices/system/cpu/cpuidle/current_driver"); ok && d != "" {
		return d
	}
	return "unknown"
}
