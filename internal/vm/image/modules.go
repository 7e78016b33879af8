package image

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
)

// rdmaModules are the kernel modules /init loads for soft-RoCE, in order:
// rdma link add fails without crc32_generic; veth carries rxe0 and rxe1;
// the rest serve rdma_cm and umad users.
var rdmaModules = []string{
	"crc32_generic", "ib_core", "ib_uverbs", "udp_tunnel", "ip6_udp_tunnel", "rdma_rxe",
	"veth", "dummy",
	"ib_cm", "iw_cm", "configfs", "rdma_cm", "rdma_ucm", "ib_umad",
}

// ninepModules are loaded only for the -out share (virtio-9p).
var ninepModules = []string{"virtio_pci", "9pnet_virtio", "9p"}

// layerModules are loaded on every fleet node besides rdmaModules and
// ninepModules: the NIC and the netem qdisc for an injected delay.
var layerModules = []string{"virtio_net", "sch_netem"}

// fleetModules are the modules a fleet node loads: a node's rxe0 sits on
// its NIC, so without veth and dummy.
func fleetModules() []string {
	var names []string
	for _, n := range append(append(append([]string{}, rdmaModules...), ninepModules...), layerModules...) {
		if n != "veth" && n != "dummy" {
			names = append(names, n)
		}
	}
	return names
}

// moduleGuestPath is where module file f of release rel goes in the guest.
func moduleGuestPath(rel, f string) string { return "/usr/lib/modules/" + rel + "/" + f }

// addModules adds the files of the named modules of m and what they need
// to a, except those whose guest paths have is true for, and returns the
// guest paths of all of them in load order.
func addModules(a *initramfs.Archive, m *kernel.Modules, names []string, have map[string]bool) ([]string, error) {
	files, err := m.LoadOrder(names)
	if err != nil {
		return nil, err
	}
	var guest []string
	for _, f := range files {
		g := moduleGuestPath(m.Release, f)
		if !have[initramfs.GuestPath(g)] {
			if err := a.HostFile(g, filepath.Join(m.Dir, f)); err != nil {
				return nil, err
			}
		}
		guest = append(guest, g)
	}
	return guest, nil
}

// vmModules are the modules a single VM loads at boot: the RDMA ones, the
// netem qdisc, with which tests drop packets on the veth (rdmalat's
// TestCountersExplainLoss), and 802.1Q VLANs, whose interfaces add GIDs of
// their own (rdmalat's TestVLANGIDs).
func vmModules() []string {
	return append(append([]string{}, rdmaModules...), "sch_netem", "8021q")
}

// nicModules are loaded, after ninepModules, only with rxevm -numa2: the
// NIC on the node-1 bridge that rxe2 sits on.
var nicModules = []string{"virtio_net"}

// addVMModules adds the modules of a single-VM guest and returns their
// guest paths in load order: the RDMA ones (vmModules), the extra ones
// for the 9p share, which /init loads only with -out (or -numa2), and
// those of -numa2's NIC that the 9p ones do not already hold.
func addVMModules(a *initramfs.Archive, m *kernel.Modules) (rdma, ninep, nic []string, err error) {
	first, err := m.LoadOrder(vmModules())
	if err != nil {
		return nil, nil, nil, err
	}
	second, err := m.LoadOrder(append(vmModules(), ninepModules...))
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := addModules(a, m, append(append(vmModules(), ninepModules...), nicModules...), nil)
	if err != nil {
		return nil, nil, nil, err
	}
	// Every RDMA module comes first in the combined order too: the 9p
	// modules need none of them, and the NIC's come last (virtio_net
	// needs virtio_pci's ring, which the 9p set loads).
	return all[:len(first)], all[len(first):len(second)], all[len(second):], nil
}

// depmod writes modules.dep for release rel under root with busybox.
func depmod(ctx context.Context, busybox, root, rel string) error {
	if out, err := exec.CommandContext(ctx, busybox, "depmod", "-b", root, rel).CombinedOutput(); err != nil {
		return fmt.Errorf("busybox depmod: %v\n%s", err, out)
	}
	return nil
}
