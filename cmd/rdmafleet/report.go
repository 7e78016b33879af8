package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime/debug"

	"github.com/rdmabench/rdmabench/internal/fleet/jobreport"
)

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o jobreport.Options
	reportFlags(fs, &o)
	dir := fs.String("dir", "", "the job `directory` of rdmafleet run (required)")
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	err := o.Check()
	if err == nil && (*dir == "" || fs.NArg() > 0) {
		err = errors.New("want -dir JOBDIR and no arguments")
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet report: %v\n", err)
		return 2
	}
	limitMemory()
	err = jobreport.Write(ctx, *dir, o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet report: %v\n", err)
	}
	return exitReport(err)
}

// reportMemory is the soft memory limit of a report: its working set for
// 1000 nodes, all pairs, is about 110 MB (the matrix's cells, the plan,
// the measures), and without a limit the collector lets the heap grow to
// twice that. Most of it holds no pointers, so collecting near the limit
// is cheap.
const reportMemory = 160 << 20

// limitMemory sets reportMemory as the soft limit, unless GOMEMLIMIT set
// one.
func limitMemory() {
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(reportMemory)
	}
}
