package main

// Multi-node mode (-nodes N): N VMs, each its own kernel, one virtio-net
// NIC each on one private segment that rxevm forwards (segment.go), and
// rxe0 on that NIC. PROGRAM runs on node1 once every node is set up (and,
// with -slurm, once every slurmd is idle); the other nodes run -node-cmd and
// are killed when PROGRAM has exited. See docs/vm.md.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxNodes bounds -nodes: every node is a TCG-emulated CPU on the host.
const maxNodes = 16

// checkFleetFlags validates the multi-node flags and sets the per-node
// defaults (-smp 1, -mem 512) unless -smp or -mem were given.
func checkFleetFlags(c *config, set map[string]bool) error {
	if c.nodes < 1 || c.nodes > maxNodes {
		return fmt.Errorf("-nodes %d: want 1 to %d (1: one VM with rxe0 and rxe1)", c.nodes, maxNodes)
	}
	if c.nodes == 1 {
		for _, f := range []string{"node-cmd", "slurm", "netem"} {
			if set[f] {
				return fmt.Errorf("-%s needs several VMs: add -nodes 4 (or another count from 2 to %d)", f, maxNodes)
			}
		}
		return nil
	}
	if _, err := netemByNode(c.netem, c.nodes); err != nil {
		return err
	}
	if !set["smp"] {
		c.smp = 1
	}
	if !set["mem"] {
		c.mem = 512
	}
	return nil
}

// netemByNode parses the -netem flags ("nodeK=ARGS") into ARGS by node.
func netemByNode(flags []string, n int) (map[int]string, error) {
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

// runFleet boots the nodes, runs PROGRAM on node1 and returns rxevm's exit
// status: PROGRAM's, or 124/125 as in single-VM mode.
func runFleet(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	logf, closeLog := progressLog(c, stderr)
	defer closeLog()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "rxevm: %v\n", err)
		if isTimeout(ctx) {
			return exitTimeout
		}
		return exitRunner
	}
	tmp, err := os.MkdirTemp("", "rxevm-fleet-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	nodes, seg, err := prepareFleet(ctx, c, tmp, logf)
	if err != nil {
		return fail(err)
	}
	defer seg.Close()

	start := time.Now()
	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	var readyCount atomic.Int32
	for _, v := range nodes {
		v.onReady = func() {
			if int(readyCount.Add(1)) == len(nodes) {
				logf("all %d nodes ready after %.1f s; starting the program on node1", len(nodes), time.Since(start).Seconds())
				if err := os.WriteFile(filepath.Join(nodes[0].ctlDir, "go"), nil, 0o644); err != nil {
					logf("cannot signal node1: %v", err)
				}
			}
		}
	}

	type result struct {
		k      int
		status int
		err    error
		con    *consoleLog
	}
	results := make(chan result, len(nodes))
	var wg sync.WaitGroup
	for i, v := range nodes {
		out := stdout
		var logFile *os.File
		if i > 0 {
			dir := c.outDir
			if dir == "" {
				dir = tmp
			}
			if logFile, err = os.Create(filepath.Join(dir, "rxevm-"+v.name+".log")); err != nil {
				return fail(err)
			}
			out = logFile
		}
		var echo io.Writer
		if c.verbose {
			echo = &prefixWriter{w: stderr, prefix: v.name + "| "}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if logFile != nil {
				defer logFile.Close()
			}
			con := newConsoleLog(echo, aliveLine, readyLine)
			status, err := bootNode(runCtx, c, v, out, con, logf)
			results <- result{i + 1, status, err, con}
		}()
	}

	code := -1
	for range nodes {
		r := <-results
		if code >= 0 {
			continue // already decided; the rest are nodes being stopped
		}
		switch {
		case r.k == 1 && r.err == nil:
			logf("program exited with status %d after %.1f s; stopping the other nodes", r.status, time.Since(start).Seconds())
			code = r.status
		case isTimeout(ctx):
			fmt.Fprintf(stderr, "rxevm: %v: killed the VMs; node%d console tail:\n%s\n", context.Cause(ctx), r.k, r.con.tail(30))
			code = exitTimeout
		case ctx.Err() != nil:
			code = exitRunner
		case r.k == 1:
			fmt.Fprintf(stderr, "rxevm: node1: %v; console tail:\n%s\n", r.err, r.con.tail(40))
			code = exitRunner
		default:
			if r.err == nil {
				r.err = fmt.Errorf("powered off with status %d", r.status)
			}
			fmt.Fprintf(stderr, "rxevm: node%d stopped before node1's program ended: %v; its console tail:\n%s\n", r.k, r.err, r.con.tail(40))
			code = exitRunner
		}
		stopAll()
	}
	wg.Wait()
	return code
}

// bootNode boots v until it shows a sign of life (up to -attempts boots) and
// returns the result of the boot that did.
func bootNode(ctx context.Context, c *config, v *vm, out io.Writer, con *consoleLog, logf logFunc) (int, error) {
	bound := c.bootTimeout
	if bound == 0 {
		// Every node boots at once on a host that may have two cores,
		// shared with other VMs: 90 s per node, up to 8 minutes. With
		// four 1-vCPU nodes beside others' 4-vCPU VMs (load 20) each node
		// got about 4% of a core and boots took 110-180 s and more.
		bound = min(2*bootBound(0, v.accel)*time.Duration(c.nodes), 8*time.Minute)
	}
	var err error
	for i := 0; i < c.attempts; i++ {
		var status int
		status, err = v.boot(ctx, bound, out, con, logf)
		// A kernel that panicked early (QEMU exits) is booted again too:
		// under a loaded host TCG's timer check sometimes fails.
		if !errors.Is(err, errNoLife) && !errors.Is(err, errQemuStart) {
			return status, err
		}
		logf("%s: %v; booting again", v.name, err)
	}
	return 0, fmt.Errorf("gave up after %d boots: %w", c.attempts, err)
}

// prepareFleet builds each node's initramfs (base, fleet layer, the run's
// files, the node's own settings) and returns the nodes' VMs.
func prepareFleet(ctx context.Context, c *config, tmp string, logf logFunc) (_ []*vm, _ *segment, err error) {
	qemu, busybox, cacheDir, err := hostSetup(c)
	if err != nil {
		return nil, nil, err
	}
	netem, err := netemByNode(c.netem, c.nodes)
	if err != nil {
		return nil, nil, err
	}
	lock, err := lockCache(ctx, cacheDir, logf)
	if err != nil {
		return nil, nil, err
	}
	defer lock.Close()
	base, err := loadBase(ctx, cacheDir, busybox, logf)
	if err != nil {
		return nil, nil, err
	}
	layer, err := loadLayer(ctx, cacheDir, base, busybox, logf)
	if err != nil {
		return nil, nil, err
	}
	kernel := filepath.Join(tmp, "vmlinuz")
	if err := linkOrCopy(base.kernel, kernel); err != nil {
		return nil, nil, err
	}
	shared := filepath.Join(tmp, "shared.cpio")
	if err := concatFiles(shared, base.initrd, layer.cpio); err != nil {
		return nil, nil, err
	}
	lock.Close()

	nonce := randomHex(8)
	both := &guestBase{dir: base.dir, files: map[string]bool{}}
	for p := range base.files {
		both.files[p] = true
	}
	for p := range layer.files {
		both.files[p] = true
	}
	ra, err := runArchive(ctx, c, both, nonce)
	if err != nil {
		return nil, nil, err
	}
	if err := addFleetFiles(ra, c, layer); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(shared, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := ra.writeTo(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := f.Close(); err != nil {
		return nil, nil, err
	}

	ctlDir := filepath.Join(tmp, "ctl")
	if err := os.Mkdir(ctlDir, 0o755); err != nil {
		return nil, nil, err
	}
	outModel := shareModel(c.outDir)
	seg, err := newSegment(c.nodes)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			seg.Close()
		}
	}()
	logf("fleet of %d nodes on a private segment (socketpairs through rxevm; -smp %d -m %d each)", c.nodes, c.smp, c.mem)
	accel := "tcg"
	if c.accel == "kvm" {
		accel = "kvm"
	}
	var nodes []*vm
	for k := 1; k <= c.nodes; k++ {
		initrd := filepath.Join(tmp, fmt.Sprintf("initrd%d", k))
		if err := concatFiles(initrd, shared); err != nil {
			return nil, nil, err
		}
		na := newArchive()
		na.file(fleetNodeEnv, 0o644, []byte(nodeEnv(k, c.nodes, netem[k])))
		na.file("/etc/hostname", 0o644, []byte(nodeName(k)+"\n"))
		if err := appendArchive(initrd, na); err != nil {
			return nil, nil, err
		}
		nodes = append(nodes, &vm{
			qemu: qemu, kernel: kernel, initrd: initrd, accel: accel,
			smp: c.smp, mem: c.mem, outDir: c.outDir, outModel: outModel, append: fleetAppend(c.appendArgs), nonce: nonce,
			name:    nodeName(k),
			ctlDir:  ctlDir,
			netArgs: seg.netArgs(k),
			netFile: seg.guest[k-1],
		})
	}
	return nodes, seg, nil
}

// fleetAppend adds no_timer_check to the kernel command line: with several
// TCG guests on a loaded 2-core host the kernel's check that timer
// interrupts arrive fails now and then ("IO-APIC + timer doesn't work",
// a panic at boot).
func fleetAppend(extra string) string {
	return strings.TrimSpace("no_timer_check " + extra)
}

// addFleetFiles adds what every fleet node shares on top of the run's
// files: its /init, /etc/hosts, -node-cmd and Slurm's configuration.
func addFleetFiles(a *archive, c *config, layer *fleetLayer) error {
	a.file("init", 0o755, []byte(fleetInitScript(layer.modules, c.slurm)))
	a.file("/etc/hosts", 0o644, []byte(fleetHosts(c.nodes)))
	a.file("/etc/nsswitch.conf", 0o644, []byte("passwd: files\ngroup: files\nhosts: files\n"))
	if c.nodeCmd != "" {
		env, err := guestEnv(os.Environ(), c.env)
		if err != nil {
			return err
		}
		cwd, err := os.Getwd()
		if err != nil {
			return err
		}
		a.file(fleetNodeCmd, 0o755, []byte(runScript(env, cwd, []string{"/bin/sh", "-c", c.nodeCmd})))
	}
	if c.slurm {
		a.file(fleetSlurmDir+"/slurm.conf", 0o644, []byte(slurmConf(c.nodes)))
		a.file(fleetSlurmDir+"/cgroup.conf", 0o644, []byte(cgroupConf))
		key := make([]byte, 1024)
		rand.Read(key)
		a.file("/etc/munge/munge.key", 0o400, key)
		a.dir("/etc/munge", 0o700)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// concatFiles writes the host files srcs, one after another, to dst.
func concatFiles(dst string, srcs ...string) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		in, err := os.Open(s)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// appendArchive appends a to the host file name.
func appendArchive(name string, a *archive) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if err := a.writeTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// A prefixWriter puts prefix before every line it passes on (-v's console
// echo of several nodes at once).
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	mid    bool // inside a line
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []byte
	for _, c := range b {
		if !p.mid {
			out = append(out, p.prefix...)
			p.mid = true
		}
		out = append(out, c)
		if c == '\n' {
			p.mid = false
		}
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
