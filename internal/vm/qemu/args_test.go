package qemu

import (
	"slices"
	"strings"
	"testing"
)

func TestQemuArgs(t *testing.T) {
	v := &VM{Qemu: "q", Kernel: "k", Initrd: "i", Accel: "tcg", SMP: 4, Mem: 2048, OutDir: "/o", Nonce: "n"}
	args := v.Args()
	for _, want := range [][]string{
		{"-accel", "tcg"}, {"-smp", "4"}, {"-m", "2048"}, {"-nic", "none"},
		{"-serial", "chardev:con"}, {"-serial", "chardev:out"},
		{"-fsdev", "local,id=rxevmout,path=/o,security_model=mapped-xattr,fmode=0644,dmode=0755"},
		{"-device", "virtio-9p-pci,fsdev=rxevmout,mount_tag=rxevmout"},
	} {
		if i := slices.Index(args, want[0]); i < 0 || !slices.Contains(args[i:], want[1]) {
			t.Errorf("qemu args lack %q: %q", want, args)
		}
	}
}

func TestFleetQemuArgs(t *testing.T) {
	v := &VM{Qemu: "q", Kernel: "k", Initrd: "i", Accel: "tcg", SMP: 1, Mem: 512, Nonce: "n",
		Name: "node2", CtlDir: "/c", NetArgs: []string{"-netdev", "dgram,id=net0,local.type=fd,local.str=5"}}
	args := v.Args()
	if slices.Contains(args, "-nic") {
		t.Errorf("a fleet node has -nic none: %q", args)
	}
	for _, want := range []string{"dgram,id=net0,local.type=fd,local.str=5",
		"local,id=rxevmctl,path=/c,security_model=mapped-xattr,fmode=0644,dmode=0755,readonly=on"} {
		if !slices.Contains(args, want) {
			t.Errorf("qemu args lack %q: %q", want, args)
		}
	}
}

func TestIsolateArgs(t *testing.T) {
	for smp, want := range map[int]string{
		2: "", // no housekeeping CPU would remain
		3: "nohz_full=1-2 irqaffinity=0",
		4: "nohz_full=2-3 irqaffinity=0-1",
		8: "nohz_full=6-7 irqaffinity=0-5",
	} {
		if got := IsolateArgs(smp); got != want {
			t.Errorf("IsolateArgs(%d) = %q, want %q", smp, got, want)
		}
	}
	v := &VM{SMP: 4, Isolate: true, QMPSock: "/tmp/q.sock", Accel: "tcg"}
	args := strings.Join(v.Args(), " ")
	if !strings.Contains(args, "tsc=reliable nohz_full=2-3 irqaffinity=0-1") || !strings.Contains(args, "-qmp unix:/tmp/q.sock,server=on,wait=off") {
		t.Errorf("qemu args: %s", args)
	}
	v = &VM{SMP: 4, Accel: "tcg"}
	if args := strings.Join(v.Args(), " "); strings.Contains(args, "nohz_full") || strings.Contains(args, "-qmp") {
		t.Errorf("defaults add isolation or QMP: %s", args)
	}
}

// TestNUMA2Args: -numa2 splits -smp 4 -m 2048 into node 0 (vCPUs 0 and 3,
// 1024 MiB) and node 1 (vCPUs 1-2, 1024 MiB), vCPU 0's node first so that
// the guest numbers the nodes as QEMU does, and puts the NIC behind a
// bridge of node 1; without -numa2 none of it is there.
func TestNUMA2Args(t *testing.T) {
	v := &VM{Qemu: "q", Kernel: "k", Initrd: "i", Accel: "tcg", SMP: 4, Mem: 2048, Nonce: "n", NUMA2: true}
	joined := strings.Join(v.Args(), " ")
	for _, want := range []string{
		"-object memory-backend-ram,id=numa-mem0,size=1024M",
		"-object memory-backend-ram,id=numa-mem1,size=1024M",
		"-numa node,nodeid=0,cpus=0,cpus=3,memdev=numa-mem0",
		"-numa node,nodeid=1,cpus=1-2,memdev=numa-mem1",
		"-device pxb,id=numa-pxb1,bus_nr=32,numa_node=1,bus=pci.0",
		"-device virtio-net-pci,netdev=numa-nic,bus=numa-pxb1,",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("qemu args lack %q: %s", want, joined)
		}
	}
	v.NUMA2 = false
	if joined := strings.Join(v.Args(), " "); strings.Contains(joined, "-numa") || strings.Contains(joined, "pxb") {
		t.Errorf("no -numa2, yet: %s", joined)
	}
	if got := strings.Join(NUMA2Args(2, 512), " "); !strings.Contains(got, "nodeid=0,cpus=0,memdev") || !strings.Contains(got, "nodeid=1,cpus=1-1,memdev") {
		t.Errorf("-smp 2: a vCPU per node: %s", got)
	}
}
