// Command rxevm runs a program inside a throwaway QEMU virtual machine that
// has two soft-RoCE RDMA devices, rxe0 and rxe1, and works as go test -exec:
//
//	go test -exec rxevm ./verbs
//	rxevm [flags] PROGRAM [ARGS...]
//
// The guest is a stock Debian kernel with rdma_rxe and an initramfs made
// from Debian packages (libibverbs, rdma-core's providers and tools,
// perftest, iproute2) plus busybox, cached under $RDMABENCH_VM_CACHE (default
// ~/.cache/rdmabench/rxevm). PROGRAM, its shared libraries, -include files
// and ./testdata are copied in; PROGRAM runs in the same working directory
// path as on the host, its output streams to rxevm's standard output, and
// rxevm exits with PROGRAM's exit status. See docs/vm.md.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/flagvar"
)

// Exit statuses of rxevm's own failures (PROGRAM's status is passed through).
const (
	exitTimeout = 124 // -timeout expired
	exitRunner  = 125 // rxevm could not build or boot the VM
)

// config holds the command line.
type config struct {
	accel       string
	bootTimeout time.Duration
	timeout     time.Duration
	timeoutSet  bool
	attempts    int
	smp, mem    int
	outDir      string
	includes    flagvar.Strings
	env         flagvar.Strings
	verbose     bool
	logFile     string
	appendArgs  string
	qemu        string
	pin         string   // -pin, see pin.go
	isolate     bool     // -isolate, see pin.go
	probe       bool     // -probe, see probe.go
	hostEnv     []string // what probeHost passes to the guest
	prog        string
	args        []string

	// Multi-node mode (see fleet.go).
	nodes   int
	nodeCmd string
	slurm   bool
	netem   flagvar.Strings
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("rxevm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.accel, "accel", "auto", "`accelerator`: kvm, tcg, or auto (KVM when /dev/kvm opens, else or if the KVM guest shows no sign of life, TCG)")
	fs.DurationVar(&c.bootTimeout, "boot-timeout", 0, "boot again when /init has not started within this `duration` (0: 45s under TCG, 15s under KVM)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "kill the VM and fail after this `duration` in all (raised to the program's -test.timeout plus 3m when that is longer)")
	fs.IntVar(&c.attempts, "attempts", 3, "boots to try when the guest shows no sign of life")
	fs.IntVar(&c.smp, "smp", 4, "guest CPUs")
	fs.IntVar(&c.mem, "mem", 2048, "guest memory in MiB")
	fs.StringVar(&c.outDir, "out", "", "host `dir`ectory that receives what the program writes under $RXEVM_OUT (a 9p share)")
	fs.Var(&c.includes, "include", "copy this host `path` (file or directory) into the guest at the same path (relative: under the working directory); repeatable")
	fs.Var(&c.env, "env", "set `KEY=VALUE` in the program's environment; repeatable, wins over everything else")
	fs.BoolVar(&c.verbose, "v", false, "show progress and the guest console on stderr")
	fs.StringVar(&c.logFile, "log", "", "append progress lines to this `file` (useful under go test, where rxevm is quiet without -v)")
	fs.StringVar(&c.appendArgs, "append", "", "extra kernel command line")
	fs.StringVar(&c.qemu, "qemu", "qemu-system-x86_64", "QEMU `binary`")
	fs.IntVar(&c.nodes, "nodes", 1, "boot this `number` of VMs on one virtual network, each with rxe0 on its own NIC; PROGRAM runs on node1 (default -smp 1 -mem 512 then)")
	fs.StringVar(&c.nodeCmd, "node-cmd", "", "with -nodes: a sh `command` run on nodes 2..N (its output in -out DIR/rxevm-nodeK.log)")
	fs.BoolVar(&c.slurm, "slurm", false, "with -nodes: run Slurm (slurmctld on node1, munged and slurmd on every node) and start PROGRAM once every node is idle")
	fs.Var(&c.netem, "netem", "with -nodes: `nodeK=ARGS` adds tc qdisc netem ARGS (e.g. node3='delay 2ms') on nodeK's NIC; repeatable")

	fs.StringVar(&c.pin, "pin", defaultPin, "pin vCPU thread i to host CPU i mod N of these `CPUs`: auto (those rxevm may use), none, or a list like 0,1")
	fs.BoolVar(&c.probe, "probe", true, "before the boot, time a busy loop on the host CPUs the measuring vCPUs run on, alone and together (about 1 s), and pass the slowdown and unsteadiness to the guest's benchmarks")
	fs.BoolVar(&c.isolate, "isolate", defaultIsolate, "keep guest kernel work off the last two vCPUs, where benchmarks run (nohz_full, irqaffinity)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rxevm [flags] PROGRAM [ARGS...]\n\n"+
			"Runs PROGRAM in a QEMU VM with soft-RoCE devices rxe0 and rxe1 and exits with its status.\n"+
			"Works as go test -exec rxevm.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.timeoutSet = set["timeout"]
	if fs.NArg() == 0 {
		fs.Usage()
		return nil, errors.New("no PROGRAM given")
	}
	switch c.accel {
	case "auto", "kvm", "tcg":
	default:
		return nil, fmt.Errorf("-accel %q: want auto, kvm or tcg", c.accel)
	}
	if _, err := pinPlan(c.pin); err != nil {
		return nil, err
	}
	if c.attempts < 1 {
		c.attempts = 1
	}
	if err := checkFleetFlags(c, set); err != nil {
		return nil, err
	}
	c.prog, c.args = fs.Arg(0), fs.Args()[1:]
	return c, nil
}

// effectiveTimeout returns -timeout, raised when PROGRAM is a Go test binary
// whose -test.timeout (plus time to boot and report) is longer, so that the
// test's own timeout, with its goroutine dump, fires first.
func effectiveTimeout(c *config) time.Duration {
	t := c.timeout
	if c.timeoutSet {
		return t
	}
	for _, a := range c.args {
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
	if c.nodes > 1 {
		code = runFleet(ctx, c, os.Stdout, os.Stderr)
	} else {
		code = run(ctx, c, os.Stdout, os.Stderr)
	}
	if s := syscall.Signal(got.Load()); s != 0 {
		fmt.Fprintf(os.Stderr, "rxevm: %v: stopped\n", s)
		code = 128 + int(s)
	}
	os.Exit(code)
}

// run boots the VM, runs the program and returns rxevm's exit status.
func run(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	logf, closeLog := progressLog(c, stderr)
	defer closeLog()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "rxevm: %v\n", err)
		if isTimeout(ctx) {
			return exitTimeout
		}
		return exitRunner
	}
	tmp, err := os.MkdirTemp("", "rxevm-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)

	v, cacheDir, err := prepare(ctx, c, tmp, logf)
	if err != nil {
		return fail(err)
	}
	var echo io.Writer
	if c.verbose {
		echo = stderr
	}
	memo := kvmMemo{dir: cacheDir}
	useKVM := c.accel == "kvm" || c.accel == "auto" && kvmUsable() && !memo.failed(logf)
	plan := accelPlan(c.accel, useKVM, c.attempts)
	for i, accel := range plan {
		v.accel = accel
		bound := bootBound(c.bootTimeout, accel)
		con := newConsoleLog(echo, aliveLine, readyLine)
		logf("booting (%s, -smp %d -m %d)", accel, c.smp, c.mem)
		status, err := v.boot(ctx, bound, stdout, con, logf)
		switch {
		case err == nil:
			return status
		case c.accel == "auto" && accel == "kvm" && (errors.Is(err, errNoLife) || errors.Is(err, errQemuStart)):
			logf("KVM did not work (%v); falling back to TCG", err)
			memo.record()
			continue
		case errors.Is(err, errNoLife):
			if i+1 < len(plan) {
				logf("%v; killed the VM, booting again", err)
			} else {
				logf("%v; killed the VM", err)
			}
			continue
		case ctx.Err() != nil:
			if isTimeout(ctx) {
				fmt.Fprintf(stderr, "rxevm: %v: killed the VM; console tail:\n%s\n", context.Cause(ctx), con.tail(30))
				return exitTimeout
			}
			return exitRunner
		default:
			fmt.Fprintf(stderr, "rxevm: %v; console tail:\n%s\n", err, con.tail(40))
			return exitRunner
		}
	}
	return fail(fmt.Errorf("gave up after %d boots without a sign of life; try -v to see the console", c.attempts))
}

// isTimeout reports whether ctx ended because -timeout expired.
func isTimeout(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// accelPlan lists the accelerator of each boot to try: under -accel auto,
// one KVM boot (when useKVM) and then TCG ones.
func accelPlan(accel string, useKVM bool, attempts int) []string {
	var plan []string
	if useKVM {
		plan = append(plan, "kvm")
	}
	if accel == "kvm" {
		for len(plan) < attempts {
			plan = append(plan, "kvm")
		}
		return plan
	}
	for i := 0; i < attempts; i++ {
		plan = append(plan, "tcg")
	}
	return plan
}

// bootBound is how long to wait for /init's first line.
func bootBound(flagValue time.Duration, accel string) time.Duration {
	switch {
	case flagValue > 0:
		return flagValue
	case accel == "kvm":
		return 15 * time.Second
	}
	return 45 * time.Second
}

// progressLog returns the function that prints progress lines ("rxevm: "
// and the text) to stderr, when -v is given or showProgress allows, and to the
// -log file when one is given.
func progressLog(c *config, stderr io.Writer) (logFunc, func()) {
	var ws []io.Writer
	if c.verbose || showProgress() {
		ws = append(ws, stderr)
	}
	closeLog := func() {}
	if c.logFile != "" {
		f, err := os.OpenFile(c.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "rxevm: -log: %v\n", err)
		} else {
			ws = append(ws, f)
			closeLog = func() { f.Close() }
		}
	}
	w := io.MultiWriter(ws...)
	return func(format string, args ...any) {
		fmt.Fprintf(w, "rxevm: "+format+"\n", args...)
	}, closeLog
}

// showProgress reports whether progress lines may go to stderr by default.
// go test -exec sends the program's stdout and stderr into one pipe, where a
// line like "rxevm: boot took 7.1 s" would read as a benchmark configuration
// line ("key: value") to benchstat and split its tables; so when stderr is
// the same pipe or file as stdout, rxevm stays quiet unless -v is given.
func showProgress() bool {
	var o, e unix.Stat_t
	if unix.Fstat(1, &o) != nil || unix.Fstat(2, &e) != nil {
		return true
	}
	if o.Dev != e.Dev || o.Ino != e.Ino {
		return true
	}
	_, err := unix.IoctlGetTermios(2, ioctlReadTermios)
	return err == nil // a terminal
}

// prepare checks the tools, brings the cached guest up to date and writes
// the per-run initramfs into tmp.
func prepare(ctx context.Context, c *config, tmp string, logf logFunc) (v *vm, cacheDir string, err error) {
	qemu, busybox, cacheDir, err := hostSetup(c)
	if err != nil {
		return nil, "", err
	}
	nonce := make([]byte, 8)
	rand.Read(nonce)
	v = &vm{
		qemu:     qemu,
		smp:      c.smp,
		mem:      c.mem,
		outDir:   c.outDir,
		append:   c.appendArgs,
		outModel: shareModel(c.outDir),
		nonce:    hex.EncodeToString(nonce),
		kernel:   filepath.Join(tmp, "vmlinuz"),
		initrd:   filepath.Join(tmp, "initrd"),
	}
	v.isolate = c.isolate // pin.go
	if v.pinCPUs, _ = pinPlan(c.pin); v.pinCPUs != nil {
		v.qmpSock = qmpSocket(tmp)
	}
	if c.probe {
		c.hostEnv = probeHost(ctx, c, v.pinCPUs, logf)
	}

	lock, err := lockCache(ctx, cacheDir, logf)
	if err != nil {
		return nil, "", err
	}
	defer lock.Close()
	base, err := loadBase(ctx, cacheDir, busybox, logf)
	if err != nil {
		return nil, "", err
	}
	if err := linkOrCopy(base.kernel, v.kernel); err != nil {
		return nil, "", err
	}
	if err := copyFile(v.initrd, base.initrd); err != nil {
		return nil, "", err
	}
	lock.Close()

	ra, err := runArchive(ctx, c, base, v.nonce)
	if err != nil {
		return nil, "", err
	}
	f, err := os.OpenFile(v.initrd, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, "", err
	}
	if err := ra.writeTo(f); err != nil {
		f.Close()
		return nil, "", err
	}
	return v, cacheDir, f.Close()
}

// hostSetup finds QEMU, busybox and the Debian tools rxevm needs, makes
// -out absolute (creating it) and returns the cache directory.
func hostSetup(c *config) (qemu, busybox, cacheDir string, err error) {
	qemu, err = exec.LookPath(c.qemu)
	if err != nil {
		return "", "", "", fmt.Errorf("%s not found: apt-get install qemu-system-x86", c.qemu)
	}
	busybox, err = exec.LookPath("busybox")
	if err != nil {
		return "", "", "", errors.New("busybox not found: apt-get install busybox-static")
	}
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg", "ldd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", "", "", fmt.Errorf("%s not found: rxevm needs a Debian (bookworm) host", tool)
		}
	}
	if c.outDir != "" {
		if err := os.MkdirAll(c.outDir, 0o755); err != nil {
			return "", "", "", err
		}
		if c.outDir, err = filepath.Abs(c.outDir); err != nil {
			return "", "", "", err
		}
	}
	if cacheDir, err = defaultCacheDir(); err != nil {
		return "", "", "", err
	}
	if cacheDir, err = filepath.Abs(cacheDir); err != nil {
		return "", "", "", err
	}
	return qemu, busybox, cacheDir, nil
}

// linkOrCopy hard-links src to dst, or copies it when that fails.
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	return copyFile(dst, src)
}

// copyFile copies the host file src to dst.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// A kvmMemo remembers, in the cache directory, that KVM showed no sign of
// life on this host kernel, so that -accel auto does not spend the KVM
// boot bound on every run. Removing the file makes rxevm try KVM again.
type kvmMemo struct {
	dir string
}

func (m kvmMemo) file() string { return filepath.Join(m.dir, "kvm-unusable") }

// hostKernel returns the host's kernel release and version.
func hostKernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

// failed reports whether KVM failed before on this host kernel.
func (m kvmMemo) failed(logf logFunc) bool {
	b, err := os.ReadFile(m.file())
	if err != nil || strings.TrimSpace(string(b)) != hostKernel() {
		return false
	}
	logf("KVM showed no sign of life on this host before; using TCG (remove %s to try KVM again)", m.file())
	return true
}

// record notes that KVM failed on this host kernel.
func (m kvmMemo) record() {
	os.WriteFile(m.file(), []byte(hostKernel()+"\n"), 0o644)
}
