package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/internal/fleet/synthjob"
)

// runSynth writes a synthetic job directory (a developer's command, not in
// the usage): `rdmafleet synth -dir D -nodes 1000` then `rdmafleet report
// -dir D` measures the report at a size no test bed has.
func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := synthjob.DefaultOptions
	dir := fs.String("dir", "", "the job `directory` to create (required)")
	fs.IntVar(&o.Nodes, "nodes", o.Nodes, "how many nodes (all pairs: n(n-1)/2 pair files)")
	fs.IntVar(&o.Count, "count", o.Count, "results per size in each pair file")
	fs.BoolVar(&o.PairFilesOnly, "pairs-only", false, "no round files (a job of an older rdmafleet)")
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	if *dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "rdmafleet synth: want -dir DIR and no arguments")
		return 2
	}
	plan, err := synthjob.Write(ctx, *dir, o)
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet synth: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d nodes, %d pair files\n", *dir, len(plan.Nodes), len(plan.Steps()))
	return 0
}
