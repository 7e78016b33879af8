package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

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
	err = jobreport.Write(ctx, *dir, o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet report: %v\n", err)
	}
	return exitReport(err)
}
