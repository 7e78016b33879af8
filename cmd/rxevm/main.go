// Command rxevm runs a program inside a throwaway QEMU virtual machine that
// has two soft-RoCE RDMA devices, rxe0 and rxe1, and works as go test -exec:
//
//	go test -exec rxevm ./verbs
//	rxevm [flags] PROGRAM [ARGS...]
//
// The guest is a stock Debian kernel with rdma_rxe (or a kernel and modules
// of your own: -kernel, -modules) and an initramfs made from Debian packages
// (libibverbs, rdma-core's providers and tools, perftest, iproute2) plus
// busybox, cached under $RDMABENCH_VM_CACHE (default
// ~/.cache/rdmabench/rxevm). PROGRAM, its shared libraries, -include files
// and ./testdata are copied in; PROGRAM runs in the same working directory
// path as on the host, its output streams to rxevm's standard output, and
// rxevm exits with PROGRAM's exit status. See docs/vm.md. The work is done
// by internal/vm and the packages below it; this file holds the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/internal/flagvar"
	"github.com/rdmabench/rdmabench/internal/vm"
	"github.com/rdmabench/rdmabench/internal/vm/image"
	"github.com/rdmabench/rdmabench/internal/vm/qmp"
)

// config holds the command line.
type config struct {
	vm.Config
	timeout    time.Duration
	timeoutSet bool
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	var includes, env, netem flagvar.Strings
	fs := flag.NewFlagSet("rxevm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Accel, "accel", "auto", "`accelerator`: kvm, tcg, or auto (KVM when /dev/kvm opens, else or if the KVM guest shows no sign of life, TCG)")
	fs.DurationVar(&c.BootTimeout, "boot-timeout", 0, "boot again when /init has not started within this `duration` (0: 45s under TCG, 15s under KVM)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "kill the VM and fail after this `duration` in all (raised to the program's -test.timeout plus 3m when that is longer)")
	fs.IntVar(&c.Attempts, "attempts", 3, "boots to try when the guest shows no sign of life")
	fs.IntVar(&c.SMP, "smp", 4, "guest CPUs")
	fs.IntVar(&c.Mem, "mem", 2048, "guest memory in MiB")
	fs.StringVar(&c.OutDir, "out", "", "host `dir`ectory that receives what the program writes under $RXEVM_OUT (a 9p share)")
	fs.Var(&includes, "include", "copy this host `path` (file or directory) into the guest at the same path (relative: under the working directory); repeatable")
	fs.Var(&env, "env", "set `KEY=VALUE` in the program's environment; repeatable, wins over everything else")
	fs.BoolVar(&c.Verbose, "v", false, "show progress and the guest console on stderr")
	fs.StringVar(&c.LogFile, "log", "", "append progress lines to this `file` (useful under go test, where rxevm is quiet without -v)")
	fs.StringVar(&c.Append, "append", "", "extra kernel command line")
	fs.StringVar(&c.Qemu, "qemu", "qemu-system-x86_64", "QEMU `binary`")
	fs.StringVar(&c.Kernel, "kernel", "", "boot this kernel `bzImage` (arch/x86/boot/bzImage of your build) instead of the cached Debian one; needs -modules")
	fs.StringVar(&c.Modules, "modules", "", "load rdma_rxe and the other modules from this `path`: a lib/modules/<release> directory (make modules_install INSTALL_MOD_PATH=DIR, then DIR) or a linux-image .deb")
	fs.IntVar(&c.Nodes, "nodes", 1, "boot this `number` of VMs on one virtual network, each with rxe0 on its own NIC; PROGRAM runs on node1 (default -smp 1 -mem 512 then)")
	fs.StringVar(&c.NodeCmd, "node-cmd", "", "with -nodes: a sh `command` run on nodes 2..N (its output in -out DIR/rxevm-nodeK.log)")
	fs.BoolVar(&c.Slurm, "slurm", false, "with -nodes: run Slurm (slurmctld on node1, munged and slurmd on every node) and start PROGRAM once every node is idle")
	fs.Var(&netem, "netem", "with -nodes: `nodeK=ARGS` adds tc qdisc netem ARGS (e.g. node3='delay 2ms') on nodeK's NIC; repeatable")

	fs.StringVar(&c.Pin, "pin", vm.DefaultPin, "pin vCPU thread i to host CPU i mod N of these `CPUs`: auto (those rxevm may use), none, or a list like 0,1")
	fs.BoolVar(&c.Probe, "probe", true, "before the boot, time a busy loop on the host CPUs the measuring vCPUs run on, alone and together (about 1 s), and pass the slowdown and unsteadiness to the guest's benchmarks")
	fs.BoolVar(&c.Insns, "insns", false, "count the guest instructions of the measured loops (a QEMU plugin built with the host's cc; the benchmarks then report user-insns/op and kernel-insns/op; see docs/work.md)")
	fs.BoolVar(&c.SIW, "siw", false, "also load soft-iWARP (siw, built once from Debian's kernel source for the guest kernel and cached) and add siw0 and siw1 on a second veth pair (192.168.78.1, .2); the program sees RXEVM_SIW=1 (see docs/vm.md)")
	fs.IntVar(&c.RxeCost, "rxe-extra-cost", 0, "rebuild rdma_rxe from Debian's kernel source with this `number` of empty loop turns (2 instructions each) at the start of rxe_rcv, every received packet: a known kernel change for A/B runs of the work metrics (see docs/work.md); 0: stock")
	fs.BoolVar(&c.NUMA2, "numa2", false, "boot the guest with two NUMA nodes (node 0: vCPU 0 and the last, node 1: the others) and a third device, rxe2, on a NIC of node 1 (a virtio-net behind a PCI expander bridge), for NIC-local placement (RDMABENCH_NUMA)")
	fs.BoolVar(&c.Isolate, "isolate", vm.DefaultIsolate, "keep guest kernel work off the last two vCPUs, where benchmarks run (nohz_full, irqaffinity)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rxevm [flags] PROGRAM [ARGS...]\n\n"+
			"Runs PROGRAM in a QEMU VM with soft-RoCE devices rxe0 and rxe1 and exits with its status.\n"+
			"Works as go test -exec rxevm.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.Includes, c.Env, c.Netem = includes, env, netem
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.timeoutSet = set["timeout"]
	if fs.NArg() == 0 {
		fs.Usage()
		return nil, errors.New("no PROGRAM given")
	}
	switch c.Accel {
	case "auto", "kvm", "tcg":
	default:
		return nil, fmt.Errorf("-accel %q: want auto, kvm or tcg", c.Accel)
	}
	if c.Insns {
		// QEMU's plugins instrument TCG's translation: under KVM nothing
		// would count.
		if c.Accel == "kvm" {
			return nil, errors.New("-insns counts under TCG only: drop -accel kvm")
		}
		c.Accel = "tcg"
	}
	if _, err := qmp.ParsePin(c.Pin); err != nil {
		return nil, err
	}
	if c.RxeCost < 0 || c.RxeCost > image.MaxRxeExtraCost {
		return nil, fmt.Errorf("-rxe-extra-cost %d: want 0 (stock rdma_rxe) to %d loop turns", c.RxeCost, image.MaxRxeExtraCost)
	}
	if c.RxeCost > 0 && (c.Kernel != "" || c.Modules != "" || c.Nodes > 1) {
		return nil, errors.New("-rxe-extra-cost rebuilds the single VM's Debian rdma_rxe: drop -kernel, -modules and -nodes")
	}
	if c.SIW && (c.Kernel != "" || c.Modules != "") {
		return nil, errors.New("-siw builds siw for Debian's guest kernel: drop -kernel and -modules (or build siw into your own kernel, CONFIG_RDMA_SIW=m, and rdma link add it yourself)")
	}
	if err := image.CheckPaths(c.Kernel, c.Modules); err != nil {
		return nil, err
	}
	if c.Attempts < 1 {
		c.Attempts = 1
	}
	if err := checkFleetFlags(c, set); err != nil {
		return nil, err
	}
	c.Prog, c.Args = fs.Arg(0), fs.Args()[1:]
	return c, nil
}

// checkFleetFlags validates the multi-node flags and sets the per-node
// defaults (-smp 1, -mem 512) unless -smp or -mem were given.
func checkFleetFlags(c *config, set map[string]bool) error {
	if c.Nodes < 1 || c.Nodes > vm.MaxNodes {
		return fmt.Errorf("-nodes %d: want 1 to %d (1: one VM with rxe0 and rxe1)", c.Nodes, vm.MaxNodes)
	}
	if c.Nodes > 1 && c.SIW {
		return errors.New("-siw adds siw devices in one VM: drop -nodes (or -siw)")
	}
	if c.Nodes > 1 && c.Insns {
		return errors.New("-insns counts in one VM: drop -nodes (or -insns)")
	}
	if c.Nodes > 1 && c.NUMA2 {
		return errors.New("-numa2 shapes one VM: drop -nodes (or -numa2)")
	}
	if c.NUMA2 && c.SMP < 2 {
		return fmt.Errorf("-numa2 with -smp %d: each of the two nodes needs a vCPU; give -smp 4", c.SMP)
	}
	if c.Nodes == 1 {
		for _, f := range []string{"node-cmd", "slurm", "netem"} {
			if set[f] {
				return fmt.Errorf("-%s needs several VMs: add -nodes 4 (or another count from 2 to %d)", f, vm.MaxNodes)
			}
		}
		return nil
	}
	if _, err := vm.NetemByNode(c.Netem, c.Nodes); err != nil {
		return err
	}
	if !set["smp"] {
		c.SMP = 1
	}
	if !set["mem"] {
		c.Mem = 512
	}
	return nil
}

// effectiveTimeout returns -timeout, raised when PROGRAM is a Go test binary
// whose -test.timeout (plus time to boot and report) is longer, so that the
// test's own timeout, with its goroutine dump, fires first.
func effectiveTimeout(c *config) time.Duration {
	t := c.timeout
	if c.timeoutSet {
		return t
	}
	for _, a := range c.Args {
		v, ok := strings.CutPrefix(a, "-test.timeout=")
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 && d+3*time.Minute > t {
			t = d + 3*time.Minute
		}
	}
	return t
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "rxevm: %v\n", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), effectiveTimeout(c),
		fmt.Errorf("timed out after %s (-timeout)", effectiveTimeout(c)))
	defer cancel()
	// A signal (^C, go test's SIGQUIT on its timeout) cancels the run, which
	// kills QEMU and removes the temporary directory.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	var got atomic.Int32
	go func() {
		got.Store(int32((<-sigs).(syscall.Signal)))
		cancel()
	}()
	var code int
	if c.Nodes > 1 {
		code = vm.RunFleet(ctx, &c.Config, os.Stdout, os.Stderr)
	} else {
		code = vm.Run(ctx, &c.Config, os.Stdout, os.Stderr)
	}
	if s := syscall.Signal(got.Load()); s != 0 {
		fmt.Fprintf(os.Stderr, "rxevm: %v: stopped\n", s)
		code = 128 + int(s)
	}
	os.Exit(code)
}
