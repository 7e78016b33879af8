package vm

// Multi-node mode (-nodes N): N VMs, each its own kernel, one virtio-net
// NIC each on one private segment that rxevm forwards (internal/vm/segment),
// and rxe0 on that NIC. PROGRAM runs on node1 once every node is set up
// (and, with -slurm, once every slurmd is idle); the other nodes run
// -node-cmd and are killed when PROGRAM has exited. See docs/vm.md.

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/guest"
	"github.com/rdmabench/rdmabench/internal/vm/image"
	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/qemu"
	"github.com/rdmabench/rdmabench/internal/vm/segment"
)

// RunFleet boots c.Nodes VMs, runs the program on node1 and returns rxevm's
// exit status: the program's, ExitTimeout or ExitRunner as in Run.
func RunFleet(ctx context.Context, c *Config, stdout, stderr io.Writer) int {
	return session(ctx, c, stderr, "rxevm-fleet-", func(tmp string, logf func(string, ...any)) int {
		return runFleet(ctx, c, tmp, stdout, stderr, logf)
	})
}

// runFleet is RunFleet in its temporary directory tmp.
func runFleet(ctx context.Context, c *Config, tmp string, stdout, stderr io.Writer, logf func(string, ...any)) int {
	nodes, seg, err := prepareFleet(ctx, c, tmp, stderr, logf)
	if err != nil {
		return fail(ctx, stderr, err)
	}
	defer seg.Close()

	start := time.Now()
	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	var readyCount atomic.Int32
	for _, v := range nodes {
		v.OnReady = func() {
			if int(readyCount.Add(1)) == len(nodes) {
				logf("all %d nodes ready after %.1f s; starting the program on node1", len(nodes), time.Since(start).Seconds())
				if err := os.WriteFile(filepath.Join(nodes[0].CtlDir, guest.GoFile), nil, 0o644); err != nil {
					logf("cannot signal node1: %v", err)
				}
			}
		}
	}
	// Every node boots at once on a host that may have two cores, shared
	// with other VMs: 90 s per node, up to 8 minutes. With four 1-vCPU
	// nodes beside others' 4-vCPU VMs (load 20) each node got about 4% of
	// a core and boots took 110-180 s and more.
	accel := "tcg"
	if c.Accel == "kvm" {
		accel = "kvm"
	}
	r := retry{earlyExit: true, bound: func(accel string) time.Duration {
		if c.BootTimeout > 0 {
			return c.BootTimeout
		}
		return min(2*bootBound(0, accel)*time.Duration(c.Nodes), 8*time.Minute)
	}}
	for range c.Attempts {
		r.plan = append(r.plan, accel)
	}

	type result struct {
		k      int
		status int
		err    error
		con    *guest.Console
	}
	results := make(chan result, len(nodes))
	var wg sync.WaitGroup
	for i, v := range nodes {
		out := stdout
		var logFile *os.File
		if i > 0 {
			dir := c.OutDir
			if dir == "" {
				dir = tmp
			}
			if logFile, err = os.Create(filepath.Join(dir, "rxevm-"+v.Name+".log")); err != nil {
				stopAll()
				wg.Wait()
				return fail(ctx, stderr, err)
			}
			out = logFile
		}
		var echo io.Writer
		if c.Verbose {
			echo = &prefixWriter{w: stderr, prefix: v.Name + "| "}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if logFile != nil {
				defer logFile.Close()
			}
			// A kernel that panicked early (QEMU exits) is booted again
			// too: under a loaded host TCG's timer check sometimes fails.
			status, con, err := r.boot(runCtx, v, out, echo, logf)
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
			fmt.Fprintf(stderr, "rxevm: %v: killed the VMs; node%d console tail:\n%s\n", context.Cause(ctx), r.k, r.con.Tail(30))
			code = ExitTimeout
		case ctx.Err() != nil:
			code = ExitRunner
		case r.k == 1:
			fmt.Fprintf(stderr, "rxevm: node1: %v; console tail:\n%s\n", r.err, r.con.Tail(40))
			code = ExitRunner
		default:
			if r.err == nil {
				r.err = fmt.Errorf("powered off with status %d", r.status)
			}
			fmt.Fprintf(stderr, "rxevm: node%d stopped before node1's program ended: %v; its console tail:\n%s\n", r.k, r.err, r.con.Tail(40))
			code = ExitRunner
		}
		stopAll()
	}
	wg.Wait()
	return code
}

// prepareFleet builds each node's initramfs (the shared part from prepare,
// then the node's own settings) and returns the nodes' VMs.
func prepareFleet(ctx context.Context, c *Config, tmp string, stderr io.Writer, logf func(string, ...any)) (_ []*qemu.VM, _ *segment.Segment, err error) {
	netem, err := NetemByNode(c.Netem, c.Nodes)
	if err != nil {
		return nil, nil, err
	}
	p, err := prepare(ctx, c, tmp, stderr, logf)
	if err != nil {
		return nil, nil, err
	}
	ctlDir := filepath.Join(tmp, "ctl")
	if err := os.Mkdir(ctlDir, 0o755); err != nil {
		return nil, nil, err
	}
	outModel := qemu.ShareModel(c.OutDir)
	seg, err := segment.New(c.Nodes)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			seg.Close()
		}
	}()
	logf("fleet of %d nodes on a private segment (socketpairs through rxevm; -smp %d -m %d each)", c.Nodes, c.SMP, c.Mem)
	var nodes []*qemu.VM
	for k := 1; k <= c.Nodes; k++ {
		initrd := filepath.Join(tmp, fmt.Sprintf("initrd%d", k))
		if err := initramfs.Concat(initrd, p.initrd); err != nil {
			return nil, nil, err
		}
		na := initramfs.New()
		na.File(guest.NodeEnvPath, 0o644, []byte(guest.NodeEnv(k, c.Nodes, netem[k])))
		na.File("/etc/hostname", 0o644, []byte(guest.NodeName(k)+"\n"))
		if err := na.AppendTo(initrd); err != nil {
			return nil, nil, err
		}
		nodes = append(nodes, &qemu.VM{
			Qemu: p.qemu, Kernel: p.kernel, Initrd: initrd,
			SMP: c.SMP, Mem: c.Mem, OutDir: c.OutDir, OutModel: outModel, Append: fleetAppend(c.Append), Nonce: p.nonce,
			Name:    guest.NodeName(k),
			CtlDir:  ctlDir,
			NetArgs: seg.NetArgs(k),
			NetFile: seg.Guest(k),
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
func addFleetFiles(a *initramfs.Archive, c *Config, layer *image.Layer) error {
	a.File("init", 0o755, []byte(guest.FleetInitScript(layer.Modules, c.Slurm)))
	a.File("/etc/hosts", 0o644, []byte(guest.FleetHosts(c.Nodes)))
	a.File("/etc/nsswitch.conf", 0o644, []byte("passwd: files\ngroup: files\nhosts: files\n"))
	if c.NodeCmd != "" {
		env, err := guest.Env(os.Environ(), c.Env)
		if err != nil {
			return err
		}
		cwd, err := os.Getwd()
		if err != nil {
			return err
		}
		a.File(guest.NodeCmdPath, 0o755, []byte(guest.RunScript(env, cwd, []string{"/bin/sh", "-c", c.NodeCmd})))
	}
	if c.Slurm {
		a.File(guest.SlurmDir+"/slurm.conf", 0o644, []byte(guest.SlurmConf(c.Nodes)))
		a.File(guest.SlurmDir+"/cgroup.conf", 0o644, []byte(guest.CgroupConf))
		key := make([]byte, 1024)
		rand.Read(key)
		a.File("/etc/munge/munge.key", 0o400, key)
		a.Dir("/etc/munge", 0o700)
	}
	return nil
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
