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
