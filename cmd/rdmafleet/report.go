package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/fleet"
	"github.com/rdmabench/rdmabench/fleet/heatmap"
)

const retestDir = "retest"

// reportOptions choose the figure outliers and the heat map are judged on.
type reportOptions struct {
	metric string // a tidied unit: p50-sec, sec/op, p99-sec, ...
	bench  string // a benchmark without the pair, "RDMAWrite/size=2"; "": the first
	th     fleet.Thresholds
}

func (o *reportOptions) register(fs *flag.FlagSet) {
	o.th = fleet.DefaultThresholds
	fs.StringVar(&o.metric, "metric", "p50-sec", "the `unit` outliers and the heat map are judged on, as benchstat names it (p50-sec, p99-sec, min-sec, sec/op)")
	fs.StringVar(&o.bench, "judge", "", "the `benchmark` judged, without the pair, e.g. RDMAWrite/size=2 (default the first in the results)")
	fs.Float64Var(&o.th.MinRatio, "min-ratio", o.th.MinRatio, "flag pairs slower than this `factor` times the fastest pair")
	fs.Float64Var(&o.th.MADs, "mads", o.th.MADs, "flag pairs slower than the median plus this many median absolute deviations")
}

func (o *reportOptions) check() error {
	if o.th.MinRatio <= 1 || o.th.MADs <= 0 {
		return fmt.Errorf("-min-ratio %g, -mads %g: want a ratio above 1 and a positive count", o.th.MinRatio, o.th.MADs)
	}
	return nil
}

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdmafleet report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o reportOptions
	o.register(fs)
	dir := fs.String("dir", "", "the job `directory` of rdmafleet run (required)")
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	err := o.check()
	if err == nil && (*dir == "" || fs.NArg() > 0) {
		err = errors.New("want -dir JOBDIR and no arguments")
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmafleet report: %v\n", err)
		return 2
	}
	if err := writeReport(*dir, o, stdout); err != nil {
		fmt.Fprintf(stderr, "rdmafleet report: %v\n", err)
		return 1
	}
	return 0
}

// collected is what one plan's run left in its directory.
type collected struct {
	plan     *fleet.Plan
	results  *fleet.Results
	bench    string
	measures []fleet.Measure
}

// collect reads dir's plan and pair files. A planned pair with neither a
// result nor a failure file counts as failed, and so does one whose file
// is malformed or holds another pair's results (with the reason); only a
// missing or unreadable plan fails the whole report.
func collect(dir string, o reportOptions) (*collected, error) {
	path := filepath.Join(dir, planFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (not a directory of rdmafleet run?)", err)
	}
	plan, err := fleet.ReadPlan(f, path)
	f.Close()
	if err != nil {
		return nil, err
	}
	c := &collected{plan: plan, results: fleet.NewResults()}
	failed := map[int]string{}
	for _, s := range plan.Steps() {
		data, err := os.ReadFile(resultPath(dir, s))
		if err == nil {
			if err := c.results.ReadPair(bytes.NewReader(data), resultPath(dir, s), s.Src, s.Dst); err != nil {
				failed[s.Index] = "bad result file: " + oneLine(err.Error())
			}
			continue
		}
		if !errors.Is(err, os.ErrNotExist) {
			failed[s.Index] = "unreadable result file: " + oneLine(err.Error())
			continue
		}
		why, err := readFailed(failedPath(dir, s))
		switch {
		case err == nil:
			failed[s.Index] = why
		case errors.Is(err, os.ErrNotExist):
			failed[s.Index] = "no result and no failure file (still running, or the job was stopped)"
		default:
			failed[s.Index] = "bad failure file: " + oneLine(err.Error())
		}
	}
	c.bench = o.bench
	if c.bench == "" && len(c.results.Benches) > 0 {
		c.bench = c.results.Benches[0]
	}
	for _, s := range plan.Steps() {
		m := fleet.Measure{Pair: s.Pair, Round: s.Round}
		if why, ok := failed[s.Index]; ok {
			m.Failed = why
		} else if sum, ok := c.results.Summary(c.bench, o.metric, s.Src, s.Dst); ok {
			m.Value = sum.Center
		} else {
			m.Failed = fmt.Sprintf("no %s result for %s in %s", o.metric, c.bench, resultPath(dir, s))
		}
		c.measures = append(c.measures, m)
	}
	return c, nil
}

// oneLine keeps a reason on one line of outliers.txt.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func analyseDir(dir string, o reportOptions) (fleet.Analysis, error) {
	c, err := collect(dir, o)
	if err != nil {
		return fleet.Analysis{}, err
	}
	return fleet.Analyse(c.measures, o.th), nil
}

// writeReport writes matrix.txt, outliers.txt and the heat map into dir,
// and outliers.txt to stdout.
func writeReport(dir string, o reportOptions, stdout io.Writer) error {
	c, err := collect(dir, o)
	if err != nil {
		return err
	}
	var m bytes.Buffer
	fmt.Fprintf(&m, "# rdmafleet: the median of each pair's results ± its 95%% confidence interval, as\n")
	fmt.Fprintf(&m, "# benchstat -filter /size:S -row /src -col /dst pairs/*.txt prints them; rows run the benchmark.\n")
	if err := c.results.WriteMatrix(&m, c.plan.Nodes); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "matrix.txt"), m.Bytes()); err != nil {
		return err
	}

	a := fleet.Analyse(c.measures, o.th)
	var b strings.Builder
	fmt.Fprintf(&b, "judged on: %s %s, %d nodes, plan %s\n", c.bench, o.metric, len(c.plan.Nodes), c.plan.Pattern)
	a.Format(&b)
	if re, err := collect(filepath.Join(dir, retestDir), o); err == nil {
		formatRetest(&b, a, re)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "outliers.txt"), []byte(b.String())); err != nil {
		return err
	}
	io.WriteString(stdout, b.String())

	if a.Measured == 0 {
		return nil // nothing to draw; outliers.txt says why
	}
	grid := heatGrid(c.results, c.bench, o.metric, c.plan.Nodes)
	p, err := heatmap.New(fmt.Sprintf("%s %s, job %s", c.bench, strings.TrimSuffix(o.metric, "-sec"), jobOf(c.results)), "us", c.plan.Nodes, grid)
	if err != nil {
		return err
	}
	side := heatmap.Size(len(c.plan.Nodes))
	for _, name := range []string{"heatmap.png", "heatmap.svg"} {
		if err := p.Save(side, side, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// heatGrid returns the heat map's cells in microseconds, each pair shown
// both ways, so that a node's row (and column) holds all its pairs.
func heatGrid(r *fleet.Results, bench, metric string, nodes []string) [][]float64 {
	grid := r.Centers(bench, metric, nodes)
	for i := range grid {
		for j := range grid[i] {
			grid[i][j] *= 1e6 // seconds -> microseconds
		}
	}
	for i := range grid {
		for j := range grid[i] {
			if math.IsNaN(grid[i][j]) {
				grid[i][j] = grid[j][i]
			}
		}
	}
	return grid
}

func jobOf(r *fleet.Results) string {
	for _, c := range r.Config {
		if v, ok := strings.CutPrefix(c, "slurm-job-id: "); ok {
			return v
		}
	}
	return "none"
}

// formatRetest says, for each retested pair, whether it is still above
// the first run's limits.
func formatRetest(b *strings.Builder, first fleet.Analysis, re *collected) {
	fmt.Fprintf(b, "retest (%d pairs in %d rounds, against the limits above):\n", len(re.measures), len(re.plan.Rounds))
	confirmed := 0
	for _, m := range re.measures {
		switch {
		case m.Failed != "":
			confirmed++
			fmt.Fprintf(b, "retest: %s %s failed again: %s\n", m.Src, m.Dst, m.Failed)
		case m.Value > first.MinLimit || m.Value > first.MADLimit:
			confirmed++
			fmt.Fprintf(b, "retest: %s %s %.2fus: still slow (confirmed)\n", m.Src, m.Dst, m.Value*1e6)
		default:
			fmt.Fprintf(b, "retest: %s %s %.2fus: within the limits now (not confirmed)\n", m.Src, m.Dst, m.Value*1e6)
		}
	}
	fmt.Fprintf(b, "confirmed: %d of %d\n", confirmed, len(re.measures))
}
