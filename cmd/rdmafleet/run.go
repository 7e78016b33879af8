package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/fleet"
)

// A driver runs a plan, one srun step per round, inside one allocation.
type driver struct {
	dir      string
	srun     string
	srunArgs []string
	agent    string
	opts     pairOptions
	report   reportOptions
	retest   bool
	perRound int
	token    string // the job's: every agent's control line is keyed with it
	logf     func(format string, args ...any)
}

// planFlags are the flags that choose the nodes and the plan.
type planFlags struct {
	nodes, spec string
	seed        uint64
}

func (p *planFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	seed, err := strconv.ParseUint(getenv("SLURM_JOB_ID"), 10, 64)
	if err != nil {
		seed = 1
	}
	fs.StringVar(&p.nodes, "nodes", "", "the nodes, as a Slurm host `list` like n[1-4,7] (default $SLURM_JOB_NODELIST)")
	fs.StringVar(&p.spec, "plan", "all-pairs", "all-pairs, sample:K (K rounds: each node measured K times), or a `file` of \"<round> <node1> <node2>\" lines (ClusterKit's format; node1 runs the benchmark)")
	fs.Uint64Var(&p.seed, "seed", seed, "shuffles the nodes of sample:K (default $SLURM_JOB_ID)")
}

func (p *planFlags) build(getenv func(string) string) (*fleet.Plan, error) {
	nodes, err := jobNodes(p.nodes, getenv)
	if err != nil {
		return nil, err
	}
	return fleet.Build(p.spec, nodes, p.seed, os.ReadFile)
}

func runPlan(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pf planFlags
	pf.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	plan, err := pf.build(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet plan: %v\n", err)
		return 2
	}
	if err := plan.Write(stdout); err != nil {
		return 1
	}
	return 0
}

func exitFlag(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

func runDriver(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := &driver{}
	var pf planFlags
	pf.register(fs, getenv)
	defDir := "rdmafleet-" + time.Now().Format("20060102-150405")
	if job := getenv("SLURM_JOB_ID"); job != "" {
		defDir = filepath.Join(getenv("SLURM_SUBMIT_DIR"), "rdmafleet-"+job)
	}
	fs.StringVar(&d.dir, "dir", defDir, "the job `directory`, on a filesystem every node shares (default $SLURM_SUBMIT_DIR/rdmafleet-$SLURM_JOB_ID)")
	fs.StringVar(&d.srun, "srun", "srun", "the srun `binary`")
	srunArgs := fs.String("srun-args", "", "extra srun `flags` for every step, e.g. \"--mpi=none\"")
	self, _ := os.Executable()
	fs.StringVar(&d.agent, "agent", self, "the rdmafleet `binary` the nodes run as agents (default this one)")
	fs.BoolVar(&d.retest, "retest", true, "measure flagged and failed pairs again, into DIR/retest")
	fs.IntVar(&d.perRound, "retest-pairs", 0, "at most this many pairs per retest round (0: as many as are disjoint)")
	d.opts.register(fs, binDir())
	d.report.register(fs)
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	d.srunArgs = strings.Fields(*srunArgs)
	d.logf = func(format string, args ...any) {
		fmt.Fprintf(stderr, "%s rdmafleet: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	// Everything that can be wrong with the input fails here, before a step runs.
	plan, err := pf.build(getenv)
	if err == nil {
		err = d.opts.check()
	}
	if err == nil {
		err = d.report.check()
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments %q: rdmafleet run takes only flags", fs.Args())
	}
	if err == nil {
		if _, lerr := exec.LookPath(d.srun); lerr != nil {
			err = fmt.Errorf("-srun %s: %w (rdmafleet run starts its steps with srun: run it inside sbatch)", d.srun, lerr)
		}
	}
	if err == nil {
		if _, serr := os.Stat(filepath.Join(d.dir, planFile)); serr == nil {
			err = fmt.Errorf("%s already holds a run (%s): choose another -dir", d.dir, planFile)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet run: %v\n", err)
		return 2
	}
	if d.token, err = newJobToken(); err != nil {
		d.logf("%v", err)
		return 1
	}
	if err := d.run(ctx, plan, stdout); err != nil {
		d.logf("%v", err)
		return 1
	}
	return 0
}

func (d *driver) run(ctx context.Context, plan *fleet.Plan, stdout io.Writer) error {
	d.logf("%d nodes, %s: %d rounds, %d pairs; results in %s", len(plan.Nodes), plan.Pattern, len(plan.Rounds), len(plan.Steps()), d.dir)
	runErr := d.runRounds(ctx, d.dir, plan)
	if runErr == nil && d.retest {
		a, err := analyseDir(d.dir, d.report)
		if err != nil {
			return err
		}
		if bad := a.BadPairs(); len(bad) > 0 {
			re, err := fleet.Retest(plan.Nodes, bad, d.perRound)
			if err != nil {
				return err
			}
			d.logf("retesting %d flagged or failed pairs in %d rounds", len(bad), len(re.Rounds))
			runErr = d.runRounds(ctx, filepath.Join(d.dir, retestDir), re)
		}
	}
	// The report covers whatever ran, also after a cancelled job.
	if err := writeReport(d.dir, d.report, stdout); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// runRounds writes plan into dir and runs its rounds, one srun step each.
func (d *driver) runRounds(ctx context.Context, dir string, plan *fleet.Plan) error {
	if err := os.MkdirAll(filepath.Join(dir, pairsDir), 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, planFile))
	if err != nil {
		return err
	}
	err = plan.Write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	log, err := os.OpenFile(filepath.Join(dir, "rounds.txt"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	for r := range len(plan.Rounds) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped before round %d: %w", r+1, context.Cause(ctx))
		}
		line, err := d.runRound(ctx, dir, plan, r+1)
		if err != nil {
			return err
		}
		d.logf("%s", line)
		fmt.Fprintln(log, line)
	}
	return nil
}

// runRound runs one round as one srun step and records every pair the
// step left without a file as failed.
func (d *driver) runRound(ctx context.Context, dir string, plan *fleet.Plan, r int) (string, error) {
	nodes := plan.RoundNodes(r)
	k := strconv.Itoa(len(nodes))
	// The step's own limit is a backstop: each agent keeps its pair's deadline.
	limit := d.opts.timeout + 2*stopGrace + 30*time.Second
	args := append([]string{
		"--nodes=" + k, "--ntasks=" + k, "--ntasks-per-node=1",
		"--nodelist=" + strings.Join(nodes, ","), "--kill-on-bad-exit=0",
		"--time=" + strconv.Itoa(int((limit+time.Minute-1)/time.Minute)),
	}, d.srunArgs...)
	args = append(args, d.agent, "agent", "-dir", dir, "-round", strconv.Itoa(r))
	args = append(args, d.opts.args()...)
	stepCtx, cancel := context.WithTimeout(ctx, limit+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(stepCtx, d.srun, args...)
	// In the environment, not the command line, which every user of a
	// node can read; srun passes it on to the agents.
	cmd.Env = append(os.Environ(), EnvFleetToken+"="+d.token)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // srun passes it to the tasks
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	stepErr := cmd.Run()
	elapsed := time.Since(start)

	ok, failed := 0, 0
	for _, s := range plan.Steps() {
		if s.Round != r {
			continue
		}
		if _, err := os.Stat(resultPath(dir, s)); err == nil {
			ok++
			continue
		}
		failed++
		if _, err := os.Stat(failedPath(dir, s)); err == nil {
			continue
		}
		why := "the step ended"
		if stepErr != nil {
			why = fmt.Sprintf("the step failed (%s %v)", d.srun, stepErr)
		}
		if err := recordFailed(dir, s, "no result from either agent: "+why); err != nil {
			return "", err
		}
	}
	name := plan.Pattern
	if plan.Pattern != "retest" {
		name = "round"
	}
	return fmt.Sprintf("%s %d of %d: %d pairs, %d ok, %d failed, %.1fs", name, r, len(plan.Rounds), ok+failed, ok, failed, elapsed.Seconds()), nil
}
