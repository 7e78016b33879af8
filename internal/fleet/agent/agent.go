// Package agent is one node's part in a round of a fleet job: src runs
// the benchmark binary against dst's rdmapeer, dst runs rdmapeer for it,
// the two agree over an authenticated control connection (package
// control), and the pair's result or failure lands in the job directory
// (package jobdir) within the pair's deadline, whatever the other side
// does.
package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/childproc"
	"github.com/rdmabench/rdmabench/internal/cmdout"
	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/control"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/rdmabench/rdmabench/internal/fleet/slurm"
	"github.com/rdmabench/rdmabench/internal/syncio"
)

// The agents of a pair talk over one TCP connection, dst listening on its
// node's own address (package control): dst says "ready" once its rdmapeer
// listens (or "fail REASON"); src runs the benchmark, stores the result
// and says "done". Either side seeing the connection close early knows
// the other agent went away.

// StopGrace is how long dst waits beyond the pair's deadline for src's
// "done" (src needs the time to kill its benchmark and record the
// failure), and how long rdmapeer gets to exit after SIGINT.
const StopGrace = 10 * time.Second

// An Agent is one node's part in one round.
type Agent struct {
	dir   string
	plan  *fleet.Plan
	step  fleet.Step
	self  string
	opts  Options
	hosts map[string]string
	env   []string // the environment of the benchmark and rdmapeer
	token string   // the job's (control.EnvToken)
	cfg   [][2]string
	logf  func(format string, args ...any)
}

// ErrStart says how an agent is started.
var ErrStart = errors.New("want -dir JOBDIR -round N (from 1) and no arguments; rdmafleet run starts the agents through srun")

// Config says which agent to be.
type Config struct {
	Dir     string // the job directory, shared by all nodes
	Round   int    // from 1
	Plan    string // the plan file; "": Dir/plan.txt
	Node    string // this node's name; "": from Slurm's environment
	Options Options
	Getenv  func(string) string
	Environ []string  // the children's environment; nil: this process's
	Log     io.Writer // the agent's log lines
}

// New checks c and returns the agent, or nil when this node sits out
// the round. Every error is in c or the environment: nothing ran.
func New(c Config) (*Agent, error) {
	environ := c.Environ
	if environ == nil {
		environ = os.Environ()
	}
	a := &Agent{dir: c.Dir, opts: c.Options, env: environ}
	if a.dir == "" || c.Round < 1 {
		return nil, ErrStart
	}
	planPath := c.Plan
	if planPath == "" {
		planPath = filepath.Join(a.dir, jobdir.PlanFile)
	}
	if err := a.opts.Check(); err != nil {
		return nil, err
	}
	var err error
	if a.self = c.Node; a.self == "" {
		if a.self, err = slurm.SelfNode(c.Getenv); err != nil {
			return nil, err
		}
	}
	if a.plan, err = jobdir.ReadPlan(context.Background(), planPath); err != nil {
		return nil, err
	}
	if c.Round > len(a.plan.Rounds) {
		return nil, fmt.Errorf("-round %d: %s has %d rounds", c.Round, planPath, len(a.plan.Rounds))
	}
	if a.hosts, err = readHosts(a.opts.Hosts); err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf("rdmafleet agent %s round %d: ", a.self, c.Round)
	a.logf = func(format string, args ...any) {
		fmt.Fprintf(c.Log, "%s %s%s\n", time.Now().Format("15:04:05.000"), prefix, fmt.Sprintf(format, args...))
	}
	step, ok := a.plan.Find(c.Round, a.self)
	if !ok {
		a.logf("sits out this round")
		return nil, nil
	}
	a.step = step
	if a.token = c.Getenv(control.EnvToken); len(a.token) < 32 {
		return nil, fmt.Errorf("%s is not set (or shorter than 32 characters): the agents take the job's token from rdmafleet run, through srun's environment (keep srun's --export to ALL or name %s in it)", control.EnvToken, control.EnvToken)
	}
	getenv := c.Getenv
	if rails := a.opts.Rails; rails != "" {
		getenv = func(k string) string { // the job's rdma-device line names the rails
			if k == env.VarDevice {
				return rails
			}
			return c.Getenv(k)
		}
	}
	a.cfg = jobdir.RunConfig(a.plan, getenv)
	return a, nil
}

// Logf writes one line to the agent's log.
func (a *Agent) Logf(format string, args ...any) { a.logf(format, args...) }

func (a *Agent) addr(node string) string {
	if h, ok := a.hosts[node]; ok {
		return h
	}
	return node
}

// Run measures the pair, or records why it could not, within the pair's
// deadline. Only a failure to write to the job directory is an error.
func (a *Agent) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	for _, d := range []string{jobdir.PairsDir, jobdir.RawDir} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return err
		}
	}
	if a.self == a.step.Src {
		return a.runSrc(ctx)
	}
	return a.runDst(ctx)
}

// fail records the pair as failed; only a failure to write is an error.
func (a *Agent) fail(format string, args ...any) error {
	reason := fmt.Sprintf(format, args...)
	a.logf("%s %s: failed: %s", a.step.Src, a.step.Dst, reason)
	if err := jobdir.RecordFailed(a.dir, a.step, reason); err != nil {
		return fmt.Errorf("recording the failure: %w", err)
	}
	return nil
}

// runSrc waits for dst's rdmapeer, runs the benchmark against it and
// stores the result.
func (a *Agent) runSrc(ctx context.Context) error {
	peerPort, ctlPort := a.opts.Ports(a.step.Index)
	ctlAddr := net.JoinHostPort(a.addr(a.step.Dst), strconv.Itoa(ctlPort))
	c := control.Session{Token: a.token, Step: a.step}
	var conn net.Conn
	var r *bufio.Reader
	var dstNonce, failed string
	for {
		var err error
		conn, err = dialRetry(ctx, ctlAddr)
		if err != nil {
			return a.fail("no agent on %s answered at %s within the pair's deadline (-timeout %v): %v", a.step.Dst, ctlAddr, a.opts.Timeout, err)
		}
		if dl, ok := ctx.Deadline(); ok {
			conn.SetDeadline(dl.Add(StopGrace))
		}
		r = control.NewReader(conn)
		dstNonce, failed, err = c.SrcHandshake(conn, r)
		if err == nil {
			break
		}
		conn.Close()
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return a.fail("the agent on %s went away before its rdmapeer was ready: %v", a.step.Dst, err)
		}
		// Something else answered at the address, or an agent of another
		// job or round: not ours. The real one may still come.
		a.logf("%s %s: refused the answer at %s: %v", a.step.Src, a.step.Dst, ctlAddr, err)
		select {
		case <-ctx.Done():
			return a.fail("no agent of this job answered at %s within the pair's deadline (-timeout %v); the last answer: %v", ctlAddr, a.opts.Timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer conn.Close()
	if failed != "" {
		return a.fail("rdmapeer on %s: %s", a.step.Dst, failed)
	}
	peer := net.JoinHostPort(a.addr(a.step.Dst), strconv.Itoa(peerPort))
	a.logf("%s %s: running the benchmark against rdmapeer at %s", a.step.Src, a.step.Dst, peer)
	start := time.Now()
	out, runErr := a.runBench(ctx, peer, control.ChildEnv(a.env, c.PeerToken()))
	if err := jobdir.WriteAtomic(jobdir.RawPath(a.dir, a.step, "bench.out"), out); err != nil {
		return err
	}
	if runErr == nil {
		var res []byte
		if res, runErr = jobdir.RewriteResults(out, jobdir.PairBase(a.step), a.step, a.cfg); runErr == nil {
			if err := jobdir.WriteAtomic(jobdir.ResultPath(a.dir, a.step), res); err != nil {
				return err
			}
			os.Remove(jobdir.FailedPath(a.dir, a.step)) // a stale one from an earlier try
			a.logf("%s %s: ok in %v", a.step.Src, a.step.Dst, time.Since(start).Round(time.Millisecond))
		}
	}
	if runErr != nil {
		if err := a.fail("%v", runErr); err != nil {
			return err
		}
	}
	_ = c.SendDone(conn, dstNonce) // best effort: dst records its own failure without it
	return nil
}

// dialRetry connects to addr, again and again until ctx ends: the agent
// at the other end may not have started yet.
func dialRetry(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runBench runs the benchmark binary against the peer until ctx's
// deadline and returns its output: standard output, then standard error.
func (a *Agent) runBench(ctx context.Context, peer string, environ []string) ([]byte, error) {
	testTimeout := time.Second
	if dl, ok := ctx.Deadline(); ok {
		// The binary's own timeout fires first, with a goroutine dump.
		testTimeout = max(time.Second, time.Until(dl)-2*time.Second)
	}
	cmd := exec.CommandContext(ctx, a.opts.Bench,
		"-test.run=^$", "-test.bench="+a.opts.Benchmark, "-test.benchtime="+a.opts.Benchtime,
		"-test.count="+strconv.Itoa(a.opts.Count), "-test.timeout="+testTimeout.Round(time.Second).String())
	childproc.TieGroup(cmd) // a deadline kills everything it started
	cmd.Env = append(environ[:len(environ):len(environ)], env.VarPeer+"="+peer)
	if a.opts.Rails != "" {
		// Each rail meets rdmapeer's device of the same name (env.RailPeer).
		cmd.Env = append(cmd.Env, env.VarDevice+"="+a.opts.Rails)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	out := stdout.Bytes()
	if stderr.Len() > 0 {
		out = append(append(out, "\n# stderr:\n"...), stderr.Bytes()...)
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("the benchmark passed the pair's deadline (-timeout %v) and was killed%s", a.opts.Timeout, cmdout.OneLine(out, jobdir.ReasonLines))
	}
	if err != nil {
		return out, fmt.Errorf("the benchmark failed (%v)%s", err, cmdout.OneLine(out, jobdir.ReasonLines))
	}
	return out, nil
}

// runDst runs rdmapeer for src until src says it is done, goes away, or
// the deadline passes. Its control port and rdmapeer listen on this
// node's own address, and serve only src's.
func (a *Agent) runDst(ctx context.Context) error {
	peerPort, ctlPort := a.opts.Ports(a.step.Index)
	srcIPs, err := control.LookupIPs(ctx, a.addr(a.step.Src))
	if err != nil {
		return a.fail("the agent on %s cannot resolve %s's address %s: %v", a.self, a.step.Src, a.addr(a.step.Src), err)
	}
	host := a.addr(a.self)
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(ctlPort)))
	if err != nil {
		return a.fail("the agent on %s cannot listen for its partner: %v (is port %d free on %s? -port-base moves it)", a.self, err, ctlPort, a.self)
	}
	c := control.Session{Token: a.token, Step: a.step}
	dstNonce, err := control.NewNonce()
	if err != nil {
		ln.Close()
		return err
	}
	authed := make(chan control.Authed, 1)
	var accepting sync.WaitGroup
	accepting.Go(func() { c.Accept(ln, srcIPs, dstNonce, a.logf, authed) })
	defer func() {
		ln.Close()
		accepting.Wait()
		select { // one that authenticated after we stopped waiting
		case cc := <-authed:
			cc.Conn.Close()
		default:
		}
	}()

	logFile, err := os.Create(jobdir.RawPath(a.dir, a.step, "peer.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := syncio.NewWriter(logFile)
	// rdmapeer lives until it is stopped below; the context only bounds a
	// stop that does not work.
	peerCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.opts.Timeout+3*StopGrace)
	defer cancel()
	allow := make([]string, len(srcIPs))
	for i, ip := range srcIPs {
		allow[i] = ip.String()
	}
	args := []string{"-listen", net.JoinHostPort(host, strconv.Itoa(peerPort)), "-allow", strings.Join(allow, ",")}
	if a.opts.Rails != "" {
		args = append(args, "-device", a.opts.Rails) // every rail, for src's to name
	}
	cmd := exec.CommandContext(peerCtx, a.opts.Peer, args...)
	childproc.TieGroup(cmd) // a deadline kills everything it started
	cmd.Env = control.ChildEnv(a.env, c.PeerToken())
	ready := make(chan error, 2)
	cmd.Stdout = &lineWatcher{w: log, prefix: "rdmapeer listening on ", found: func() { ready <- nil }}
	cmd.Stderr = log
	cmd.WaitDelay = StopGrace
	if err := cmd.Start(); err != nil {
		ready <- err
	} else {
		exited := make(chan error, 1)
		go func() {
			err := cmd.Wait()
			ready <- fmt.Errorf("exited before listening (%v)", err)
			exited <- err
		}()
		defer stopPeer(cmd, exited)
	}
	var peerErr error
	select {
	case peerErr = <-ready:
	case <-ctx.Done():
		peerErr = errors.New("not listening within the pair's deadline")
	}
	if peerErr != nil {
		peerErr = fmt.Errorf("%s %v%s", a.opts.Peer, peerErr, cmdout.OneLine(readFile(logFile.Name()), jobdir.ReasonLines))
	}

	var cc control.Authed
	select {
	case cc = <-authed:
	case <-ctx.Done():
		if peerErr != nil {
			return a.fail("%v", peerErr)
		}
		return a.fail("the agent on %s never connected within the pair's deadline (-timeout %v)", a.step.Src, a.opts.Timeout)
	}
	conn := cc.Conn
	defer conn.Close()
	dl, _ := ctx.Deadline()
	conn.SetDeadline(dl.Add(StopGrace))
	if peerErr != nil {
		io.WriteString(conn, c.Fail(cc.SrcNonce, peerErr.Error()))
		return a.fail("%v", peerErr)
	}
	if _, err := io.WriteString(conn, c.Ready(cc.SrcNonce)); err != nil {
		return a.fail("the agent on %s went away before rdmapeer was ready: %v", a.step.Src, err)
	}
	a.logf("%s %s: rdmapeer listening on port %d", a.step.Src, a.step.Dst, peerPort)
	err = c.CheckDone(cc.R, dstNonce)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return a.fail("the agent on %s went away in the middle of the pair (killed?)", a.step.Src)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return a.fail("no word from the agent on %s by the pair's deadline (-timeout %v): %v", a.step.Src, a.opts.Timeout, err)
	}
	return a.fail("the agent on %s ended the pair with a bad line: %v", a.step.Src, err)
}

// stopPeer ends rdmapeer: SIGINT (it then logs its session totals),
// SIGKILL to its process group if it has not gone after StopGrace.
func stopPeer(cmd *exec.Cmd, exited <-chan error) {
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(StopGrace):
		if cmd.Cancel != nil {
			cmd.Cancel()
		}
		cmd.Process.Kill()
		<-exited
	}
}

func readFile(path string) []byte {
	data, _ := os.ReadFile(path)
	return data
}

// A lineWatcher passes output on to w and calls found once, when a line
// starting with prefix has been written.
type lineWatcher struct {
	w      io.Writer
	prefix string
	found  func()
	line   []byte
	done   bool
}

func (l *lineWatcher) Write(p []byte) (int, error) {
	if !l.done {
		l.line = append(l.line, p...)
		for {
			i := bytes.IndexByte(l.line, '\n')
			if i < 0 {
				break
			}
			if strings.HasPrefix(string(l.line[:i]), l.prefix) {
				l.done, l.line = true, nil
				l.found()
				break
			}
			l.line = l.line[i+1:]
		}
	}
	return l.w.Write(p)
}
