package vm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Exit statuses of rxevm's own failures (PROGRAM's status is passed through).
const (
	ExitTimeout = 124 // the run's context ran out (-timeout)
	ExitRunner  = 125 // rxevm could not build or boot the VM
)

// The defaults of -pin and -isolate: what measured best on a 2-CPU host
// (pinned and isolated measured slower and no steadier: docs/validation.md).
const (
	DefaultPin     = "none"
	DefaultIsolate = false
)

// MaxNodes bounds -nodes: every node is a TCG-emulated CPU on the host.
const MaxNodes = 16

// A Config is one run: the command line of rxevm.
type Config struct {
	Accel       string        // kvm, tcg or auto
	BootTimeout time.Duration // 0: by accelerator (bootBound)
	Attempts    int           // boots to try when the guest shows no sign of life
	SMP, Mem    int           // guest CPUs, MiB
	OutDir      string        // host directory shared at $RXEVM_OUT
	Includes    []string      // host paths copied in
	Env         []string      // KEY=VALUE for the program, applied last
	Verbose     bool          // progress and the console on stderr
	LogFile     string        // progress lines appended here
	Append      string        // extra kernel command line
	Qemu        string        // QEMU binary
	Pin         string        // -pin: auto, none or a CPU list (qmp.ParsePin)
	Isolate     bool          // keep guest kernel work off the measuring vCPUs
	Probe       bool          // time the host CPUs before the boot
	Insns       bool          // load the instruction counter (internal/vm/insns)
	SIW         bool          // add soft-iWARP devices siw0 and siw1 (image.LoadSIW)
	RxeCost     int           // > 0: rdma_rxe rebuilt with this many loop turns per packet (image.LoadRxeCost)
	NUMA2       bool          // two NUMA nodes, rxe2 on a NIC of node 1 (-numa2)
	Kernel      string        // a bzImage to boot instead of Debian's
	Modules     string        // its modules: a lib/modules/<release> tree or a linux-image .deb
	Prog        string        // PROGRAM
	Args        []string      // its arguments

	// Multi-node mode (RunFleet).
	Nodes   int
	NodeCmd string   // sh command run on nodes 2..N
	Slurm   bool     // run Slurm across the nodes
	Netem   []string // nodeK=ARGS
}

// NetemByNode parses the -netem flags ("nodeK=ARGS") of an n-node fleet
// into ARGS by node.
func NetemByNode(flags []string, n int) (map[int]string, error) {
	m := map[int]string{}
	for _, f := range flags {
		name, args, ok := strings.Cut(f, "=")
		k, err := strconv.Atoi(strings.TrimPrefix(name, "node"))
		if !ok || !strings.HasPrefix(name, "node") || err != nil || strings.TrimSpace(args) == "" {
			return nil, fmt.Errorf("-netem %q: want nodeK=NETEM-ARGS, e.g. -netem 'node3=delay 2ms'", f)
		}
		if k < 1 || k > n {
			return nil, fmt.Errorf("-netem %q: no node%d among node1..node%d", f, k, n)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("-netem %q: node%d given twice; put all its netem arguments in one flag", f, k)
		}
		m[k] = strings.TrimSpace(args)
	}
	return m, nil
}
