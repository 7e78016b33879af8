package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// errNoLife means the guest printed no sign of life within the boot bound:
// the VM is killed and booted again.
var errNoLife = errors.New("no sign of life from the guest")

// errQemuStart means QEMU exited before the guest's /init started.
var errQemuStart = errors.New("qemu exited before the guest started")

// errNoMarker means the guest stopped without reporting the program's exit
// status (a kernel panic, an out-of-memory kill of /init, a crash).
var errNoMarker = errors.New("the guest stopped without reporting an exit status")

// errSetup means the guest's /init failed to set up the RDMA devices.
var errSetup = errors.New("guest setup failed")

// A vm is one boot's inputs.
type vm struct {
	qemu     string
	kernel   string
	initrd   string
	accel    string // "kvm" or "tcg"
	smp      int
	mem      int // MiB
	outDir   string
	outModel string // 9p security model of -out (share9p.go)
	append   string // extra kernel command line
	nonce    string

	// Multi-node mode (-nodes) only.
	name    string   // "node2": names the node in progress lines
	netArgs []string // the NIC on the fleet's segment, instead of -nic none
	netFile *os.File // the node's end of the segment (segment.go), fd 5 in QEMU
	ctlDir  string   // host directory shared as the control share
	onReady func()   // called once when the guest's setup is done

	// pin.go: pin the vCPU threads through QMP; keep kernel work off the
	// measuring vCPUs.
	qmpSock string
	pinCPUs []int
	isolate bool
}

// qemuArgs returns QEMU's command line. The kernel console goes to the first
// serial port (fd 3), the program's output to the second (fd 4).
func (v *vm) qemuArgs() []string {
	cpu := "max"
	if v.accel == "kvm" {
		cpu = "host"
	}
	// tsc=reliable: under TCG the kernel finds the vCPUs' TSCs
	// unsynchronised and falls back to the HPET, which turns every
	// clock_gettime into a system call and an emulated MMIO read (658 ns
	// measured, against 78 ns with the TSC). perftest reads the TSC
	// directly, so without this the two would not pay the same for a
	// timestamp. QEMU's TCG TSC is one virtual clock for all vCPUs.
	cmdline := "console=ttyS0 quiet panic=-1 rdinit=/init tsc=reliable"
	if iso := isolateArgs(v.smp); v.isolate && iso != "" {
		cmdline += " " + iso
	}
	if v.append != "" {
		cmdline += " " + v.append
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-accel", v.accel, "-cpu", cpu,
		"-smp", fmt.Sprint(v.smp), "-m", fmt.Sprint(v.mem),
		"-kernel", v.kernel, "-initrd", v.initrd, "-append", cmdline,
		"-chardev", "file,id=con,path=/dev/fd/3", "-serial", "chardev:con",
		"-chardev", "file,id=out,path=/dev/fd/4", "-serial", "chardev:out",
	}
	if len(v.netArgs) > 0 {
		args = append(args, v.netArgs...)
	} else {
		args = append(args, "-nic", "none")
	}
	if v.qmpSock != "" {
		args = append(args, "-qmp", "unix:"+v.qmpSock+",server=on,wait=off")
	}
	if v.outDir != "" {
		args = append(args, shareArgs(v.outDir, outTag, v.outModel, false)...)
	}
	if v.ctlDir != "" {
		// The guest only reads the control share.
		args = append(args, shareArgs(v.ctlDir, fleetCtlTag, "", true)...)
	}
	return args
}

// poweroffGrace bounds the wait for QEMU to exit once the guest reported
// the program's exit status.
const poweroffGrace = 20 * time.Second

// A logFunc receives progress lines.
type logFunc func(format string, args ...any)

// boot runs one VM to completion. Program output goes to stdout as it
// arrives; console output is kept in con (and echoed when con echoes).
// bound is how long to wait for /init's first line. It returns the program's
// exit status, or an error: errNoLife, errQemuStart, errNoMarker, errSetup
// (wrapped, with details) or the context's error.
func (v *vm) boot(ctx context.Context, bound time.Duration, stdout io.Writer, con *consoleLog, logf logFunc) (int, error) {
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
	qout := &lockedBuffer{b: new(bytes.Buffer)}
	cmd := exec.Command(v.qemu, v.qemuArgs()...)
	cmd.ExtraFiles = []*os.File{conW, outW}
	if v.netFile != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, v.netFile) // segmentFD
	}
	cmd.Stdout = qout
	cmd.Stderr = qout
	cmd.SysProcAttr = qemuProcAttr()
	start := time.Now()
	err = cmd.Start()
	conW.Close()
	outW.Close()
	if err != nil {
		conR.Close()
		outR.Close()
		return 0, fmt.Errorf("start %s: %w", v.qemu, err)
	}
	if v.qmpSock != "" {
		pinAfterStart(ctx, v.qmpSock, v.pinCPUs, logf)
	}

	filter := newExitFilter(stdout, v.nonce)
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
	case <-con.seen(aliveLine):
		logf("%sboot took %.1f s (%s, to /init)", v.prefix(), time.Since(start).Seconds(), v.accel)
	case <-watchdog.C:
		stop()
		return 0, fmt.Errorf("%w within %s (%s)", errNoLife, bound, v.accel)
	case err := <-exited:
		wg.Wait()
		return 0, fmt.Errorf("%w (%v): %s", errQemuStart, err, qemuTail())
	case <-ctx.Done():
		stop()
		return 0, ctx.Err()
	}

	// The setup (modules, devices) gets the same bound again; the program
	// has not started before "ready", so booting again is safe until then.
	ready := con.seen(readyLine)
	setupBound := time.NewTimer(bound)
	defer setupBound.Stop()
	reported := filter.reported
	var grace <-chan time.Time
	var qerr error
	for running := true; running; {
		select {
		case <-ready:
			if v.name != "" {
				logf("%s ready after %.1f s", v.name, time.Since(start).Seconds())
			} else {
				logf("guest ready after %.1f s (modules, rxe0, rxe1)", time.Since(start).Seconds())
			}
			ready = nil
			setupBound.Stop()
			if v.onReady != nil {
				v.onReady()
			}
		case <-setupBound.C:
			stop()
			return 0, fmt.Errorf("%w: /init started but did not finish the setup within %s (%s)", errNoLife, bound, v.accel)
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
	status, setup, ok := filter.result()
	switch {
	case setup:
		return 0, fmt.Errorf("%w", errSetup)
	case !ok:
		detail := ""
		if qerr != nil {
			detail = fmt.Sprintf(" (qemu: %v %s)", qerr, qemuTail())
		}
		return 0, fmt.Errorf("%w%s", errNoMarker, detail)
	}
	logf("program exited with status %d; VM ran %.1f s", status, time.Since(start).Seconds())
	return status, nil
}

// prefix is "nodeK: " in multi-node mode, else "".
func (v *vm) prefix() string {
	if v.name == "" {
		return ""
	}
	return v.name + ": "
}

// lockedBuffer is a bytes.Buffer safe for QEMU's stdout and stderr copiers.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// kvmUsable reports whether /dev/kvm can be opened for reading and writing.
func kvmUsable() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
