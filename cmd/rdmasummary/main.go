// Command rdmasummary prints the one-screen summary of a results file of
// the latency benchmarks (make bench's bench.txt): a row per benchmark
// and size, columns min, p50, p90, p99, p99.9, max and stalls, each the
// median of the runs ± its 95% interval as benchstat computes it, in
// microseconds, under one line of the configuration that matters.
//
//	rdmasummary [-out DIR] [-artifacts DIR] bench.txt
//
// With -out it also saves the table as DIR/summary.txt; with -artifacts
// (the -outputdir of go test -artifacts) it draws DIR/overview.png and
// writes DIR/index.html, which links every benchmark's plots, raw
// samples, HDR logs and summary.json, first drawing the per-run plots
// that the benchmarks left to it (go test ... -args -rdmabench.noplots,
// as make bench runs them).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
	"github.com/rdmabench/rdmabench/internal/report"
	"github.com/rdmabench/rdmabench/internal/summary"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("rdmasummary", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("out", "", "results `directory`: save summary.txt there (and, with -artifacts, overview.png and index.html)")
	arts := fl.String("artifacts", "", "the go test -artifacts -outputdir `directory` of the same run, for the picture and the index")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmasummary [-out DIR] [-artifacts DIR] bench.txt\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() != 1 {
		fmt.Fprintf(stderr, "rdmasummary: want one results file (got %d arguments); example: rdmasummary -out out out/bench.txt\n", fl.NArg())
		return 2
	}
	if *arts != "" && *out == "" {
		fmt.Fprintf(stderr, "rdmasummary: -artifacts needs -out, the directory for overview.png and index.html; example: rdmasummary -out out -artifacts out/artifacts out/bench.txt\n")
		return 2
	}
	if err := summarize(fl.Arg(0), *out, *arts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "rdmasummary: %v\n", err)
		return 1
	}
	return 0
}

func summarize(results, out, arts string, stdout, stderr io.Writer) error {
	f, err := summary.ReadFile(results)
	if err != nil {
		return err
	}
	for _, e := range f.Skipped {
		fmt.Fprintf(stderr, "rdmasummary: skipped %v\n", e)
	}
	if n := f.SkippedCount - len(f.Skipped); n > 0 {
		fmt.Fprintf(stderr, "rdmasummary: skipped %d more malformed lines\n", n)
	}
	t := summary.Summarize(f, summary.DefaultOptions)
	var text strings.Builder
	if err := t.Format(&text); err != nil {
		return err
	}
	if _, err := io.WriteString(stdout, text.String()); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	if err := atomicfile.WriteFile(filepath.Join(out, "summary.txt"), []byte(text.String()), 0o644); err != nil {
		return err
	}
	if arts == "" {
		return nil
	}
	benches, err := report.LoadArtifacts(out, arts)
	if err != nil {
		return err
	}
	if err := report.DrawPlots(out, benches); err != nil {
		return err
	}
	merged, err := report.Merged(out, benches)
	if err != nil {
		return err
	}
	if err := report.Overview(filepath.Join(out, report.OverviewFile), t, merged); err != nil {
		return err
	}
	var files []string
	for _, name := range []string{filepath.Base(results), "summary.txt", "benchstat.txt"} {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			files = append(files, name)
		}
	}
	index, err := report.WriteIndex(out, report.Page{
		Title: "rdmabench results", Summary: text.String(), Overview: report.OverviewFile, Files: files, Benches: benches,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\npicture: %s\nindex of every run's plots, samples and HDR logs: %s\n", filepath.Join(out, report.OverviewFile), index)
	return nil
}
