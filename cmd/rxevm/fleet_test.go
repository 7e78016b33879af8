package main

import (
	"bytes"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestFleetFlags(t *testing.T) {
	c, err := parseFlags([]string{"-nodes", "4", "-slurm", "-netem", "node3=delay 2ms", "prog"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.nodes != 4 || !c.slurm || c.smp != 1 || c.mem != 512 {
		t.Errorf("nodes %d slurm %v smp %d mem %d, want 4 true 1 512", c.nodes, c.slurm, c.smp, c.mem)
	}
	// Explicit -smp/-mem win; one VM keeps the single-VM defaults.
	if c, _ := parseFlags([]string{"-nodes", "2", "-smp", "2", "-mem", "1024", "prog"}, io.Discard); c.smp != 2 || c.mem != 1024 {
		t.Errorf("-smp 2 -mem 1024 with -nodes 2: got %d %d", c.smp, c.mem)
	}
	if c, _ := parseFlags([]string{"prog"}, io.Discard); c.nodes != 1 || c.smp != 4 || c.mem != 2048 {
		t.Errorf("defaults: nodes %d smp %d mem %d, want 1 4 2048", c.nodes, c.smp, c.mem)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-nodes", "0"}, "-nodes 0: want 1 to 16"},
		{[]string{"-nodes", "17"}, "-nodes 17: want 1 to 16"},
		{[]string{"-slurm"}, "-slurm needs several VMs: add -nodes 4"},
		{[]string{"-netem", "node1=delay 1ms"}, "-netem needs several VMs"},
		{[]string{"-nodes", "4", "-netem", "node5=delay 1ms"}, `no node5 among node1..node4`},
		{[]string{"-nodes", "4", "-netem", "3=delay 1ms"}, `want nodeK=NETEM-ARGS`},
		{[]string{"-nodes", "4", "-netem", "node3="}, `want nodeK=NETEM-ARGS`},
		{[]string{"-nodes", "4", "-netem", "node3=delay 1ms", "-netem", "node3=loss 1%"}, "node3 given twice"},
	} {
		_, err := parseFlags(append(tt.args, "prog"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to say %q", tt.args, err, tt.want)
		}
	}
}

func TestFleetInitScript(t *testing.T) {
	for _, slurm := range []bool{false, true} {
		s := fleetInitScript([]string{"/usr/lib/modules/k/a.ko", "/usr/lib/modules/k/virtio_net.ko"}, slurm)
		if i := strings.Index(s, aliveLine); i < 0 || i > strings.Index(s, "mount") {
			t.Errorf("alive line missing or after the first mount")
		}
		for _, want := range []string{
			"/usr/lib/modules/k/a.ko \\\n\t/usr/lib/modules/k/virtio_net.ko",
			"hostname node$K",
			"$IP addr add 10.77.0.$K/24 dev eth0",
			"/usr/sbin/tc qdisc add dev eth0 root netem $RXEVM_NETEM",
			"rdma link add rxe0 type rxe netdev eth0",
			"mount -t 9p -o trans=virtio,version=9p2000.L rxevmctl /rxevm/ctl",
			"until [ -e /rxevm/ctl/go ]",
			`\036RXEVM-EXIT-%s: %d\n`,
		} {
			if !strings.Contains(s, want) {
				t.Errorf("slurm=%v: init lacks %q", slurm, want)
			}
		}
		// Node 1 runs the program only after the start signal (and, with
		// Slurm, once every node is idle); the others never print the marker.
		goAt, runAt := strings.Index(s, "/rxevm/ctl/go"), strings.Index(s, "/bin/sh "+guestRunShell)
		if goAt < 0 || runAt < goAt {
			t.Errorf("slurm=%v: the program may start before the host's signal", slurm)
		}
		if idle := strings.Index(s, "nodes idle"); slurm && (idle < goAt || idle > runAt) {
			t.Errorf("the program may start before every slurmd is idle")
		}
		if got := strings.Contains(s, "slurmctld"); got != slurm {
			t.Errorf("slurm=%v: script mentions slurmctld: %v", slurm, got)
		}
		if strings.Contains(s, "\nip ") || strings.Contains(s, "\ttc ") {
			t.Errorf("init calls a busybox applet instead of iproute2")
		}
		if sh, err := exec.LookPath("sh"); err == nil {
			if out, err := exec.Command(sh, "-n", "-c", s).CombinedOutput(); err != nil {
				t.Errorf("sh -n: %v\n%s", err, out)
			}
		}
	}
}

func TestFleetQemuArgs(t *testing.T) {
	v := &vm{qemu: "q", kernel: "k", initrd: "i", accel: "tcg", smp: 1, mem: 512, nonce: "n",
		name: "node2", ctlDir: "/c", netArgs: []string{"-netdev", "dgram,id=net0,local.type=fd,local.str=5"}}
	args := v.qemuArgs()
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

func TestPrefixWriter(t *testing.T) {
	var b bytes.Buffer
	w := &prefixWriter{w: &b, prefix: "node2| "}
	for _, s := range []string{"a\nb", "c\n", "\nd\n"} {
		w.Write([]byte(s))
	}
	if got, want := b.String(), "node2| a\nnode2| bc\nnode2| \nnode2| d\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFleetFiles(t *testing.T) {
	if got, want := fleetHosts(3), "127.0.0.1\tlocalhost\n10.77.0.1\tnode1\n10.77.0.2\tnode2\n10.77.0.3\tnode3\n"; got != want {
		t.Errorf("fleetHosts(3) = %q, want %q", got, want)
	}
	if got, want := nodeEnv(2, 4, "delay 2ms"), "RXEVM_NODE=2\nRXEVM_NODES=4\nRXEVM_NETEM='delay 2ms'\n"; got != want {
		t.Errorf("nodeEnv = %q, want %q", got, want)
	}
	conf := slurmConf(4)
	for _, want := range []string{"SlurmctldHost=node1\n", "AuthType=auth/munge\n", "NodeName=node[1-4] CPUs=1", "PartitionName=fleet Nodes=ALL Default=YES"} {
		if !strings.Contains(conf, want) {
			t.Errorf("slurm.conf lacks %q", want)
		}
	}
	if got := fleetAppend("x=1"); got != "no_timer_check x=1" {
		t.Errorf("fleetAppend = %q", got)
	}
}
