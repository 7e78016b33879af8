package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/fleet/driver"

	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/agent"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/rdmabench/rdmabench/internal/fleet/slurm"
)

// planFlags are the flags that choose the nodes and the plan.
type planFlags struct {
	nodes, spec string
	seed        uint64
}

// planRailsFlag registers rdmafleet plan's -rails, which only describes
// the rails in the plan's header.
func planRailsFlag(fs *flag.FlagSet) *string {
	return fs.String("rails", "", "the `devices` each pair measures rail by rail, as rdmafleet run -rails: named in the plan's header; the rounds are the same (default: $RDMABENCH_DEVICE's list)")
}

func (p *planFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&p.nodes, "nodes", "", "the nodes, as a Slurm host `list` like n[1-4,7] (default $SLURM_JOB_NODELIST)")
	fs.StringVar(&p.spec, "plan", "all-pairs", "all-pairs, sample:K (K rounds: each node measured K times), or a `file` of \"<round> <node1> <node2>\" lines (ClusterKit's format; node1 runs the benchmark)")
	fs.Uint64Var(&p.seed, "seed", slurm.JobSeed(getenv), "shuffles the nodes of sample:K (default $SLURM_JOB_ID)")
}

func (p *planFlags) build(ctx context.Context, getenv func(string) string) (*fleet.Plan, error) {
	nodes, err := slurm.JobNodes(p.nodes, getenv)
	if err != nil {
		return nil, err
	}
	// A plan file is read like the job directory's: a regular file, bounded,
	// given up on a signal.
	readFile := func(name string) ([]byte, error) { return jobdir.ReadFile(ctx, name, jobdir.MaxPlan) }
	return fleet.Build(p.spec, nodes, p.seed, readFile)
}

func runPlan(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pf planFlags
	pf.register(fs, getenv)
	rails := planRailsFlag(fs)
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	rp, err := planRails(*rails, getenv)
	var load string
	if err == nil {
		load, err = planLoad(getenv)
	}
	var plan *fleet.Plan
	if err == nil {
		plan, err = pf.build(ctx, getenv)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet plan: %v\n", err)
		if ctx.Err() != nil {
			return 1 // stopped by a signal: a failure, as for report and run, not bad input
		}
		return 2
	}
	if d := rp.String(); d != "" {
		fmt.Fprintf(stdout, "# rails: each pair measures %s\n", d)
	}
	if load != "" {
		fmt.Fprintf(stdout, "# load: %s\n", load)
	}
	if err := plan.Write(stdout); err != nil {
		return 1
	}
	return 0
}

func runDriver(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := &driver.Driver{}
	var opts agent.Options
	var pf planFlags
	pf.register(fs, getenv)
	fs.StringVar(&d.Dir, "dir", slurm.JobDir(getenv, time.Now()), "the job `directory`, on a filesystem every node shares (default $SLURM_SUBMIT_DIR/rdmafleet-$SLURM_JOB_ID)")
	fs.StringVar(&d.Srun, "srun", "srun", "the srun `binary`")
	srunArgs := fs.String("srun-args", "", "extra srun `flags` for every step, e.g. \"--mpi=none\"")
	self, _ := os.Executable()
	fs.StringVar(&d.Agent, "agent", self, "the rdmafleet `binary` the nodes run as agents (default this one)")
	fs.BoolVar(&d.Retest, "retest", true, "measure flagged and failed pairs again, into DIR/retest")
	fs.IntVar(&d.PerRound, "retest-pairs", 0, "at most this many pairs per retest round (0: as many as are disjoint)")
	pairFlags(fs, &opts, binDir())
	reportFlags(fs, &d.Report)
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	limitMemory() // the report at the end
	d.SrunArgs = strings.Fields(*srunArgs)
	d.AgentArgs, d.Timeout = pairArgs(opts), opts.Timeout
	d.Logf = func(format string, args ...any) {
		fmt.Fprintf(stderr, "%s rdmafleet: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	// Everything that can be wrong with the input fails here, before a step runs.
	plan, err := pf.build(ctx, getenv)
	if err == nil {
		err = opts.Check()
	}
	var rp railPlan
	if err == nil {
		rp, err = planRails(opts.Rails, getenv)
	}
	var load string
	if err == nil {
		load, err = planLoad(getenv)
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments %q: rdmafleet run takes only flags", fs.Args())
	}
	if err == nil {
		err = d.Check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet run: %v\n", err)
		return 2
	}
	if r := rp.String(); r != "" {
		d.Logf("rails: each pair measures %s", r)
	}
	if load != "" {
		d.Logf("load: %s", load)
	}
	err = d.Run(ctx, plan, stdout)
	if err != nil {
		d.Logf("%v", err)
	}
	return exitReport(err)
}
