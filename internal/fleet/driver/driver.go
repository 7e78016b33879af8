// Package driver runs a fleet job's plan inside one Slurm allocation:
// one srun step per round, in which every node of the round runs its
// agent (package agent); pairs the step left without a file are recorded
// as failed, flagged pairs are measured again in a retest, and the report
// (package jobreport) is written whatever ran.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/agent"
	"github.com/rdmabench/rdmabench/internal/fleet/control"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/rdmabench/rdmabench/internal/fleet/jobreport"
)

// A Driver runs a plan, one srun step per round, inside one allocation.
type Driver struct {
	Dir       string        // the job directory, on a filesystem every node shares
	Srun      string        // the srun binary
	SrunArgs  []string      // extra srun flags for every step
	Agent     string        // the rdmafleet binary the nodes run as agents
	AgentArgs []string      // the flags that give every agent the pair options
	Timeout   time.Duration // a pair's deadline (agent.Options.Timeout)
	Report    jobreport.Options
	Retest    bool // measure flagged and failed pairs again, into Dir/retest
	PerRound  int  // at most this many pairs per retest round; 0: as many as are disjoint
	Logf      func(format string, args ...any)
	token     string // the job's: every agent's control line is keyed with it
}

// Check says what is wrong with d before any step runs.
func (d *Driver) Check() error {
	if err := d.Report.Check(); err != nil {
		return err
	}
	if _, err := exec.LookPath(d.Srun); err != nil {
		return fmt.Errorf("-srun %s: %w (rdmafleet run starts its steps with srun: run it inside sbatch)", d.Srun, err)
	}
	if _, err := os.Stat(filepath.Join(d.Dir, jobdir.PlanFile)); err == nil {
		return fmt.Errorf("%s already holds a run (%s): choose another -dir", d.Dir, jobdir.PlanFile)
	}
	return nil
}

// Run runs plan, then the retest of what it flagged, and writes the
// report (its outliers.txt also to stdout). It draws the job's token.
func (d *Driver) Run(ctx context.Context, plan *fleet.Plan, stdout io.Writer) error {
	var err error
	if d.token, err = control.NewJobToken(); err != nil {
		return err
	}
	d.Logf("%d nodes, %s: %d rounds, %d pairs; results in %s", len(plan.Nodes), plan.Pattern, len(plan.Rounds), len(plan.Steps()), d.Dir)
	runErr := d.runRounds(ctx, d.Dir, plan)
	if runErr == nil && d.Retest {
		as, err := jobreport.Analyse(ctx, d.Dir, d.Report)
		if err != nil {
			return err
		}
		if bad := jobreport.BadPairs(as); len(bad) > 0 {
			re, err := fleet.Retest(plan.Nodes, bad, d.PerRound)
			if err != nil {
				return err
			}
			d.Logf("retesting %d flagged or failed pairs in %d rounds", len(bad), len(re.Rounds))
			runErr = d.runRounds(ctx, filepath.Join(d.Dir, jobdir.RetestDir), re)
		}
	}
	// The report covers whatever ran, also after a cancelled job: its
	// reads are of files already written, bounded, so it runs to the end.
	err = jobreport.Write(context.WithoutCancel(ctx), d.Dir, d.Report, stdout)
	if runErr != nil && errors.Is(err, jobreport.ErrOverLimits) {
		err = nil // the run's own failure decides; the cells over are in outliers.txt
	}
	return errors.Join(runErr, err)
}

// runRounds writes plan into dir and runs its rounds, one srun step each.
func (d *Driver) runRounds(ctx context.Context, dir string, plan *fleet.Plan) error {
	if err := os.MkdirAll(filepath.Join(dir, jobdir.PairsDir), 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, jobdir.PlanFile))
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
	log, err := os.OpenFile(filepath.Join(dir, jobdir.RoundsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
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
		d.Logf("%s", line)
		fmt.Fprintln(log, line)
	}
	return nil
}

// runRound runs one round as one srun step and records every pair the
// step left without a file as failed.
func (d *Driver) runRound(ctx context.Context, dir string, plan *fleet.Plan, r int) (string, error) {
	nodes := plan.RoundNodes(r)
	k := strconv.Itoa(len(nodes))
	// The step's own limit is a backstop: each agent keeps its pair's deadline.
	limit := d.Timeout + 2*agent.StopGrace + 30*time.Second
	args := append([]string{
		"--nodes=" + k, "--ntasks=" + k, "--ntasks-per-node=1",
		"--nodelist=" + strings.Join(nodes, ","), "--kill-on-bad-exit=0",
		"--time=" + strconv.Itoa(int((limit+time.Minute-1)/time.Minute)),
	}, d.SrunArgs...)
	args = append(args, d.Agent, "agent", "-dir", dir, "-round", strconv.Itoa(r))
	args = append(args, d.AgentArgs...)
	stepCtx, cancel := context.WithTimeout(ctx, limit+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(stepCtx, d.Srun, args...)
	// In the environment, not the command line, which every user of a
	// node can read; srun passes it on to the agents.
	cmd.Env = append(os.Environ(), control.EnvToken+"="+d.token)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // srun passes it to the tasks
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	stepErr := cmd.Run()
	elapsed := time.Since(start)

	ok, failed := 0, 0
	var steps []fleet.Step
	for _, s := range plan.Steps() {
		if s.Round != r {
			continue
		}
		steps = append(steps, s)
		if _, err := os.Stat(jobdir.ResultPath(dir, s)); err == nil {
			ok++
			continue
		}
		failed++
		if _, err := os.Stat(jobdir.FailedPath(dir, s)); err == nil {
			continue
		}
		why := "the step ended"
		if stepErr != nil {
			why = fmt.Sprintf("the step failed (%s %v)", d.Srun, stepErr)
		}
		if err := jobdir.RecordFailed(dir, s, "no result from either agent: "+why); err != nil {
			return "", err
		}
	}
	// One file of the round's results, so that the report opens one file
	// a round; it reads the pair files when this one is missing.
	if err := jobdir.WriteRound(ctx, dir, steps); err != nil {
		d.Logf("round %d: no round file (the report reads the pair files): %v", r, err)
	}
	name := plan.Pattern
	if plan.Pattern != "retest" {
		name = "round"
	}
	return fmt.Sprintf("%s %d of %d: %d pairs, %d ok, %d failed, %.1fs", name, r, len(plan.Rounds), ok+failed, ok, failed, elapsed.Seconds()), nil
}
