package qemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/internal/childproc"
	"github.com/rdmabench/rdmabench/internal/syncio"

	"github.com/rdmabench/rdmabench/internal/vm/guest"
	"github.com/rdmabench/rdmabench/internal/vm/qmp"
)

// ErrNoLife means the guest printed no sign of life within the boot bound:
// the VM is killed and booted again.
var ErrNoLife = errors.New("no sign of life from the guest")

// ErrQemuStart means QEMU exited before the guest's /init started.
var ErrQemuStart = errors.New("qemu exited before the guest started")

// ErrNoMarker means the guest stopped without reporting the program's exit
// status (a kernel panic, an out-of-memory kill of /init, a crash).
var ErrNoMarker = errors.New("the guest stopped without reporting an exit status")

// ErrSetup means the guest's /init failed to set up the RDMA devices.
var ErrSetup = errors.New("guest setup failed")

// A VM is one boot's inputs.
type VM struct {
	Qemu     string // the QEMU binary
	Kernel   string
	Initrd   string
	Accel    string // "kvm" or "tcg"
	SMP      int
	Mem      int // MiB
	OutDir   string
	OutModel string // 9p security model of -out (ShareModel)
	Append   string // extra kernel command line
	Nonce    string // the run's end-of-run marker nonce
	// The instruction counter (internal/vm/insns): QEMU's -plugin
	// arguments, and the host directory shared read-only with the guest
	// that the plugin writes its counts into.
	PluginArgs []string
	InsnsDir   string

	// Multi-node mode (-nodes) only.
	Name    string   // "node2": names the node in progress lines
	NetArgs []string // the NIC on the fleet's segment, instead of -nic none
	NetFile *os.File // the node's end of the segment, fd 5 in QEMU
	CtlDir  string   // host directory shared as the control share
	OnReady func()   // called once when the guest's setup is done

	// Pin the vCPU threads through QMP (internal/vm/qmp); keep kernel
	// work off the measuring vCPUs (IsolateArgs).
	QMPSock string
	PinCPUs []int
	Isolate bool
	// NUMA2 gives the guest two NUMA nodes and a NIC on node 1
	// (NUMA2Args).
	NUMA2 bool
}

// Args returns QEMU's command line. The kernel console goes to the first
// serial port (fd 3), the program's output to the second (fd 4).
func (v *VM) Args() []string {
	cpu := "max"
	if v.Accel == "kvm" {
		cpu = "host"
	}
	// tsc=reliable: under TCG the kernel finds the vCPUs' TSCs
	// unsynchronised and falls back to the HPET, which turns every
	// clock_gettime into a system call and an emulated MMIO read (658 ns
	// measured, against 78 ns with the TSC). perftest reads the TSC
	// directly, so without this the two would not pay the same for a
	// timestamp. QEMU's TCG TSC is one virtual clock for all vCPUs.
	// hugepages=8: 16 MiB of 2 MiB pages reserved at boot, for the tests
	// of RDMABENCH_HUGEPAGES (a loopback pair takes one per side); on the
	// command line rather than in /init, so the cached guest is unchanged.
	cmdline := "console=ttyS0 quiet panic=-1 rdinit=/init hugepages=8 tsc=reliable"
	if iso := IsolateArgs(v.SMP); v.Isolate && iso != "" {
		cmdline += " " + iso
	}
	if v.Append != "" {
		cmdline += " " + v.Append
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-accel", v.Accel, "-cpu", cpu,
		"-smp", fmt.Sprint(v.SMP), "-m", fmt.Sprint(v.Mem),
		"-kernel", v.Kernel, "-initrd", v.Initrd, "-append", cmdline,
		"-chardev", "file,id=con,path=/dev/fd/3", "-serial", "chardev:con",
		"-chardev", "file,id=out,path=/dev/fd/4", "-serial", "chardev:out",
	}
	if len(v.NetArgs) > 0 {
		args = append(args, v.NetArgs...)
	} else {
		args = append(args, "-nic", "none")
	}
	if v.NUMA2 {
		args = append(args, NUMA2Args(v.SMP, v.Mem)...)
	}
	if v.QMPSock != "" {
		args = append(args, "-qmp", "unix:"+v.QMPSock+",server=on,wait=off")
	}
	if v.OutDir != "" {
		args = append(args, shareArgs(v.OutDir, guest.OutTag, v.OutModel, false)...)
	}
	if v.InsnsDir != "" {
		args = append(args, shareArgs(v.InsnsDir, guest.InsnsTag, "", true)...)
		args = append(args, v.PluginArgs...)
	}
	if v.CtlDir != "" {
		// The guest only reads the control share.
		args = append(args, shareArgs(v.CtlDir, guest.CtlTag, "", true)...)
	}
	return args
}

// NUMA2Args are the QEMU arguments of rxevm -numa2: two NUMA nodes of
// half the memory each, node 0 holding vCPU 0 and the last vCPU, node 1
// the others (1-2 of 4), so that the last two vCPUs (the CPU rule without
// NUMA) straddle the nodes; and a virtio-net NIC behind a PCI expander
// bridge (pxb) of node 1, whose ACPI _PXM gives the NIC's PCI function
// numa_node 1 in the guest. Linux numbers nodes in the order it meets
// them in the SRAT, vCPU 0's first: node 0 must hold vCPU 0 for QEMU's
// numbers to be the guest's. The NIC's backend is a hub port with nothing
// else on the hub: rxe2's loopback never leaves the guest.
func NUMA2Args(smp, mem int) []string {
	node0 := ",cpus=0"
	if smp > 2 {
		node0 += fmt.Sprintf(",cpus=%d", smp-1)
	}
	node1 := fmt.Sprintf(",cpus=1-%d", max(smp-2, 1))
	m1 := mem / 2
	return []string{
		"-object", fmt.Sprintf("memory-backend-ram,id=numa-mem0,size=%dM", mem-m1),
		"-object", fmt.Sprintf("memory-backend-ram,id=numa-mem1,size=%dM", m1),
		"-numa", "node,nodeid=0" + node0 + ",memdev=numa-mem0",
		"-numa", "node,nodeid=1" + node1 + ",memdev=numa-mem1",
		"-device", "pxb,id=numa-pxb1,bus_nr=32,numa_node=1,bus=pci.0",
		"-netdev", "hubport,id=numa-nic,hubid=31",
		"-device", "virtio-net-pci,netdev=numa-nic,bus=numa-pxb1,addr=0x4,mac=52:54:00:78:00:01",
	}
}

// poweroffGrace bounds the wait for QEMU to exit once the guest reported
// the program's exit status.
const poweroffGrace = 20 * time.Second

// Boot runs one VM to completion. Program output goes to stdout as it
// arrives; console output is kept in con (and echoed when con echoes).
// bound is how long to wait for /init's first line. It returns the program's
// exit status, or an error: ErrNoLife, ErrQemuStart, ErrNoMarker, ErrSetup
// (wrapped, with details) or the context's error.
func (v *VM) Boot(ctx context.Context, bound time.Duration, stdout io.Writer, con *guest.Console, logf func(format string, args ...any)) (int, error) {
	conR, conW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		conR.Close()
		conW.Close()
		return 0, err
	}
	qout := &syncio.Buffer{}
	cmd := exec.Command(v.Qemu, v.Args()...)
	cmd.ExtraFiles = []*os.File{conW, outW}
	if v.NetFile != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, v.NetFile) // the segment's fd 5
	}
	cmd.Stdout = qout
	cmd.Stderr = qout
	childproc.TieGroup(cmd) // ^C reaches rxevm, which stops QEMU itself
	start := time.Now()
	err = cmd.Start()
	conW.Close()
	outW.Close()
	if err != nil {
		conR.Close()
		outR.Close()
		return 0, fmt.Errorf("start %s: %w", v.Qemu, err)
	}
	if v.QMPSock != "" {
		qmp.PinAfterStart(ctx, v.QMPSock, v.PinCPUs, logf)
	}

	filter := guest.NewExitFilter(stdout, v.Nonce)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(con, conR); conR.Close() }()
	go func() { defer wg.Done(); io.Copy(filter, outR); outR.Close() }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		cmd.Process.Kill()
		err := <-exited
		wg.Wait()
		return err
	}
	qemuTail := func() string { return strings.TrimSpace(qout.String()) }

	watchdog := time.NewTimer(bound)
	defer watchdog.Stop()
	select {
	case <-con.Seen(guest.AliveLine):
		logf("%sboot took %.1f s (%s, to /init)", v.Prefix(), time.Since(start).Seconds(), v.Accel)
	case <-watchdog.C:
		stop()
		return 0, fmt.Errorf("%w within %s (%s)", ErrNoLife, bound, v.Accel)
	case err := <-exited:
		wg.Wait()
		return 0, fmt.Errorf("%w (%v): %s", ErrQemuStart, err, qemuTail())
	case <-ctx.Done():
		stop()
		return 0, ctx.Err()
	}

	// The setup (modules, devices) gets the same bound again; the program
	// has not started before "ready", so booting again is safe until then.
	ready := con.Seen(guest.ReadyLine)
	setupBound := time.NewTimer(bound)
	defer setupBound.Stop()
	reported := filter.Reported()
	var grace <-chan time.Time
	var qerr error
	for running := true; running; {
		select {
		case <-ready:
			if v.Name != "" {
				logf("%s ready after %.1f s", v.Name, time.Since(start).Seconds())
			} else {
				logf("guest ready after %.1f s (modules, rxe0, rxe1)", time.Since(start).Seconds())
			}
			ready = nil
			setupBound.Stop()
			if v.OnReady != nil {
				v.OnReady()
			}
		case <-setupBound.C:
			stop()
			return 0, fmt.Errorf("%w: /init started but did not finish the setup within %s (%s)", ErrNoLife, bound, v.Accel)
		case <-reported:
			// The status is in; give the guest a moment to power off.
			reported, grace = nil, time.After(poweroffGrace)
		case <-grace:
			logf("the guest did not power off within %s of the program's exit; killing it", poweroffGrace)
			stop()
			running = false
		case qerr = <-exited:
			running = false
		case <-ctx.Done():
			stop()
			return 0, ctx.Err()
		}
	}
	wg.Wait()
	filter.Close()
	status, setup, ok := filter.Result()
	switch {
	case setup:
		return 0, fmt.Errorf("%w", ErrSetup)
	case !ok:
		detail := ""
		if qerr != nil {
			detail = fmt.Sprintf(" (qemu: %v %s)", qerr, qemuTail())
		}
		return 0, fmt.Errorf("%w%s", ErrNoMarker, detail)
	}
	logf("program exited with status %d; VM ran %.1f s", status, time.Since(start).Seconds())
	return status, nil
}

// Prefix is "nodeK: " in multi-node mode, else "".
func (v *VM) Prefix() string {
	if v.Name == "" {
		return ""
	}
	return v.Name + ": "
}

// KVMUsable reports whether /dev/kvm can be opened for reading and writing.
func KVMUsable() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// IsolateArgs returns the guest kernel command line that keeps the guest
// kernel's own work off the last two of smp vCPUs, where the benchmarks
// poll, or "" when there are fewer than 3 (a housekeeping CPU must
// remain): nohz_full (no 4 ms scheduler tick while one task runs there,
// and RCU callbacks offloaded) and irqaffinity (interrupts to the others).
// Not isolcpus: it would also take the two CPUs out of every process's
// default affinity, and rdmalat picks the last two CPUs it may use. Not
// idle=poll: an idle vCPU would then spin a host CPU too, and a 2-CPU host
// has none to spare.
func IsolateArgs(smp int) string {
	if smp < 3 {
		return ""
	}
	meas := fmt.Sprintf("%d-%d", smp-2, smp-1)
	house := "0"
	if smp > 3 {
		house = fmt.Sprintf("0-%d", smp-3)
	}
	return "nohz_full=" + meas + " irqaffinity=" + house
}
