// Command rdmafleet measures RDMA latency between every pair of nodes of
// a Slurm allocation and finds the slow node or link: a latency matrix in
// benchstat form, the outliers, and a heat map.
//
//	sbatch -N 16 --ntasks-per-node=1 --exclusive rdmafleet.sbatch
//
// runs, on the allocation's first node,
//
//	rdmafleet run -dir JOBDIR [-plan all-pairs|sample:K|FILE] ...
//
// which plans the rounds (all pairs in n-1 rounds of n/2 disjoint pairs),
// starts one srun step per round, in which `rdmafleet agent` runs on each
// node: one node of a pair runs rdmapeer, the other the benchmark binary
// (go test -c -o rdmabench.test .) with RDMABENCH_PEER pointing at it.
// Each pair has a deadline (-timeout); a dead or hung pair is recorded as
// failed and the round goes on. Flagged pairs are measured again in a
// retest round. Then, in JOBDIR:
//
//	plan.txt                 the plan, "<round> <src> <dst>" per line
//	pairs/roundNN-SRC-DST.txt   benchfmt results, named .../src=SRC/dst=DST/size=S
//	                         (-rails mlx5_0,mlx5_1: .../dst=DST/rail=DEV/size=S,
//	                         src's rail DEV against dst's device DEV)
//	pairs/roundNN-SRC-DST.failed  why a pair has no result
//	raw/                     the benchmark's and rdmapeer's own output
//	rounds.txt               how long each round took
//	rounds/roundNN.txt       the round's pair files with results, one after
//	                         the other: the report opens one file a round
//	matrix.txt               per size (and rail) and metric, rows src, columns dst
//	outliers.txt             pairs above 2.1x the fastest or median + 6 MAD,
//	                         failed pairs, and the nodes in most of them
//	                         (with rails, each rail judged on its own)
//	heatmap.png, heatmap.svg (with rails, heatmap-DEV.png and .svg per rail)
//
// Under RDMABENCH_LOAD (passed on to every pair's benchmark), each pair
// file carries the job's rdmabench-load line and the stream's load-MB/s,
// matrix.txt a load-B/s table, and outliers.txt an "under load" line; the
// load is never judged.
//
// Other subcommands: `rdmafleet plan` prints a plan without running it
// (and, with rails or a load, which each pair measures);
// `rdmafleet report -dir JOBDIR` writes the report files again.
//
// Exit status: 0 when the report is written (failed pairs and outliers are
// in it), 3 when it is written and cells are over the absolute limits of
// -max (p99=20us: RDMABENCH_MAX's syntax), 2 for bad input (flags, node
// list, plan file), 1 otherwise
// (SIGINT or SIGTERM included: every subcommand stops on them). The
// agent exits 0 when its pair is measured, recorded as failed, or when it
// sits out the round; 2 for bad input; 1 when it cannot write to JOBDIR.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Getenv, os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: rdmafleet run|agent|plan|report [flags]

  rdmafleet run -dir JOBDIR       inside an allocation: plan, one srun step per round, report
  rdmafleet agent -dir D -round R one node's part in a round (rdmafleet run starts it through srun)
  rdmafleet plan -nodes 'n[1-4]'  print the plan: "<round> <src> <dst>" per line
  rdmafleet report -dir JOBDIR    write matrix.txt, outliers.txt, heatmap.png and .svg again

rdmafleet CMD -h lists each one's flags.
`

func dispatch(ctx context.Context, args []string, getenv func(string) string, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runDriver(ctx, args[1:], getenv, stdout, stderr)
	case "agent":
		return runAgent(ctx, args[1:], getenv, environ, stderr)
	case "plan":
		return runPlan(ctx, args[1:], getenv, stdout, stderr)
	case "report":
		return runReport(ctx, args[1:], stdout, stderr)
	case "synth": // a synthetic job directory, for measuring the report
		return runSynth(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "rdmafleet: unknown command %q\n%s", args[0], usage)
	return 2
}

// binDir is the directory of this executable: by default rdmapeer and
// rdmabench.test sit next to it.
func binDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}
