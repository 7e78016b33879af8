package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/internal/fleet/agent"
)

func runAgent(ctx context.Context, args []string, getenv func(string) string, environ []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := agent.Config{Getenv: getenv, Environ: environ, Log: stderr}
	fs.StringVar(&c.Dir, "dir", "", "the job `directory`, shared by all nodes (required)")
	fs.IntVar(&c.Round, "round", 0, "the `round` of the plan to run, from 1 (required)")
	fs.StringVar(&c.Plan, "plan", "", "the plan `file` (default DIR/plan.txt)")
	fs.StringVar(&c.Node, "node", "", "this node's `name` (default $SLURMD_NODENAME, else $SLURM_STEP_NODELIST[$SLURM_PROCID])")
	pairFlags(fs, &c.Options, binDir())
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var a *agent.Agent
	if err == nil && fs.NArg() > 0 {
		err = agent.ErrStart
	}
	if err == nil {
		a, err = agent.New(c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet agent: %v\n", err)
		return 2
	}
	if a == nil {
		return 0 // a bye
	}
	if err := a.Run(ctx); err != nil {
		a.Logf("%v", err)
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
