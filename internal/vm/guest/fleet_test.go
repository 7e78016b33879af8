package guest

import (
	"strings"
	"testing"
)

func TestFleetInitScript(t *testing.T) {
	for _, slurm := range []bool{false, true} {
		s := FleetInitScript([]string{"/usr/lib/modules/k/a.ko", "/usr/lib/modules/k/virtio_net.ko"}, slurm)
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
		goAt, runAt := strings.Index(s, "/rxevm/ctl/go"), strings.Index(s, "/bin/sh "+RunShellPath)
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
		checkShell(t, s)
	}
}

func TestFleetFiles(t *testing.T) {
	if got, want := FleetHosts(3), "127.0.0.1\tlocalhost\n10.77.0.1\tnode1\n10.77.0.2\tnode2\n10.77.0.3\tnode3\n"; got != want {
		t.Errorf("FleetHosts(3) = %q, want %q", got, want)
	}
	if got, want := NodeEnv(2, 4, "delay 2ms"), "RXEVM_NODE=2\nRXEVM_NODES=4\nRXEVM_NETEM='delay 2ms'\n"; got != want {
		t.Errorf("nodeEnv = %q, want %q", got, want)
	}
	conf := SlurmConf(4)
	for _, want := range []string{"SlurmctldHost=node1\n", "AuthType=auth/munge\n", "NodeName=node[1-4] CPUs=1", "PartitionName=fleet Nodes=ALL Default=YES"} {
		if !strings.Contains(conf, want) {
			t.Errorf("slurm.conf lacks %q", want)
		}
	}
}
