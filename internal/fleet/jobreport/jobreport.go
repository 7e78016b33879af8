// Package jobreport writes a fleet job's report from its directory: the
// latency matrix in benchstat's form (matrix.txt), the outliers and failed
// pairs with the nodes in most of them (outliers.txt), the retest's
// verdict on each flagged pair, and a heat map (heatmap.png, .svg).
package jobreport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/heatmap"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/rdmabench/rdmabench/latency"
)

// Options choose the figure outliers and the heat map are judged on.
type Options struct {
	Metric     string // a tidied unit: p50-sec, sec/op, p99-sec, ...
	Bench      string // a benchmark without the pair, "RDMAWrite/size=2"; "": the first
	Thresholds fleet.Thresholds
	Limits     []latency.Limit // absolute limits on every cell (-max); nil: none
}

// DefaultOptions judge the median of the first benchmark with fleet's
// default thresholds.
var DefaultOptions = Options{Metric: "p50-sec", Thresholds: fleet.DefaultThresholds}

// Check says what is wrong with o, naming the flags to change.
func (o *Options) Check() error {
	if o.Thresholds.MinRatio <= 1 || o.Thresholds.MADs <= 0 {
		return fmt.Errorf("-min-ratio %g, -mads %g: want a ratio above 1 and a positive count", o.Thresholds.MinRatio, o.Thresholds.MADs)
	}
	return nil
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
//
// Every read stops when ctx is done, and a pair file that is not a
// regular file (a FIFO would block the open) fails its pair.
func collect(ctx context.Context, dir string, o Options) (*collected, error) {
	path := filepath.Join(dir, jobdir.PlanFile)
	plan, err := jobdir.ReadPlan(ctx, path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) { // not there, or unreadable
		return nil, fmt.Errorf("%w (not a directory of rdmafleet run?)", err)
	}
	if err != nil {
		return nil, err
	}
	// The cells of the matrix's times and of the judged metric only.
	keep := func(unit string) bool { return fleet.MatrixUnit(unit) || unit == o.Metric }
	c := &collected{plan: plan, results: fleet.NewResultsOf(keep)}
	failed, err := readPairs(ctx, dir, plan, c.results)
	if err != nil {
		return nil, err
	}
	c.bench = o.Bench
	if c.bench == "" && len(c.results.Benches) > 0 {
		c.bench = c.results.Benches[0]
	}
	n := 0
	for _, round := range plan.Rounds {
		n += len(round)
	}
	c.measures = make([]fleet.Measure, 0, n)
	for r, round := range plan.Rounds {
		for _, pair := range round {
			s := fleet.Step{Pair: pair, Round: r + 1, Index: len(c.measures)}
			m := fleet.Measure{Pair: s.Pair, Round: s.Round}
			if why, ok := failed[s.Index]; ok {
				m.Failed = why
			} else if cell, ok := c.results.Cell(c.bench, o.Metric, s.Src, s.Dst); ok {
				m.Value = cell.Center
			} else {
				m.Failed = fmt.Sprintf("no %s result for %s in %s", o.Metric, c.bench, jobdir.ResultPath(dir, s))
			}
			c.measures = append(c.measures, m)
		}
	}
	return c, nil
}

// oneLine keeps a reason on one line of outliers.txt.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut bounds a reason the report makes from an error: its file names and
// quoted lines come from the job directory.
func cut(s string) string { return jobdir.CutReason(s) }

// Analyse judges the pairs of dir.
func Analyse(ctx context.Context, dir string, o Options) (fleet.Analysis, error) {
	c, err := collect(ctx, dir, o)
	if err != nil {
		return fleet.Analysis{}, err
	}
	return fleet.Analyse(c.measures, o.Thresholds), nil
}

// Write writes matrix.txt, outliers.txt and the heat map into dir,
// and outliers.txt to stdout, each file whole or not at all (written under
// a temporary name and renamed). It stops when ctx is done. With
// o.Limits, outliers.txt lists and counts the cells over them, and once
// every file is written the error matches ErrOverLimits.
func Write(ctx context.Context, dir string, o Options, stdout io.Writer) error {
	c, err := collect(ctx, dir, o)
	if err != nil {
		return err
	}
	// The verdict first: then the half million measures of a 1000-node job
	// can go before the matrix and the heat map are drawn.
	a := fleet.Analyse(c.measures, o.Thresholds)
	c.measures = nil
	err = atomicfile.Write(filepath.Join(dir, "matrix.txt"), 0o644, func(m io.Writer) error {
		fmt.Fprintf(m, "# rdmafleet: the median of each pair's results ± its 95%% confidence interval, as\n")
		fmt.Fprintf(m, "# benchstat -filter /size:S -row /src -col /dst pairs/*.txt prints them; rows run the benchmark.\n")
		if n := len(c.plan.Nodes); n > fullMatrixNodes {
			fmt.Fprintf(m, "# %d nodes, more than %d: only the judged table (%s %s, the heat map's) is written;\n", n, fullMatrixNodes, c.bench, o.Metric)
			fmt.Fprintf(m, "# for a node's row of another, add /src:NODE to the filter (benchstat -filter '/size:S /src:NODE').\n")
			return c.results.WriteMatrixOf(m, c.plan.Nodes, c.bench, o.Metric)
		}
		return c.results.WriteMatrix(m, c.plan.Nodes)
	})
	if err != nil {
		return err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "judged on: %s %s, %d nodes, plan %s\n", c.bench, o.Metric, len(c.plan.Nodes), c.plan.Pattern)
	a.Format(&b)
	var over []overCell
	judged := 0
	if len(o.Limits) > 0 {
		over, judged = checkLimits(c, o.Limits)
		formatLimits(&b, o.Limits, over, judged)
	}
	if re, err := collect(ctx, filepath.Join(dir, jobdir.RetestDir), o); err == nil {
		formatRetest(&b, a, re)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := jobdir.WriteAtomic(filepath.Join(dir, "outliers.txt"), []byte(b.String())); err != nil {
		return err
	}
	io.WriteString(stdout, b.String())

	if a.Measured == 0 {
		return limitsErr(over, judged) // nothing to draw; outliers.txt says why
	}
	grid := heatGrid(c.results, c.bench, o.Metric, c.plan.Nodes)
	p, err := heatmap.New(fmt.Sprintf("%s %s, job %s", c.bench, strings.TrimSuffix(o.Metric, "-sec"), jobOf(c.results)), "us", c.plan.Nodes, grid)
	if err != nil {
		return err
	}
	side := heatmap.Size(len(c.plan.Nodes))
	for _, format := range []string{"png", "svg"} {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := atomicfile.Write(filepath.Join(dir, "heatmap."+format), 0o644, func(f io.Writer) error {
			return heatmap.Save(f, p, side, format)
		})
		if err != nil {
			return err
		}
	}
	return limitsErr(over, judged)
}

// fullMatrixNodes is the most nodes whose matrix.txt holds every table
// (each size and time metric); beyond, it holds the judged one only. A
// table of N nodes is N columns of about 15 characters: 1000 nodes made a
// 154 MB matrix.txt of 10 tables, 15 KB a line, that no one reads whole
// and that cost a tenth of the report's time; the heat map and the
// judged table carry the fleet's picture, and benchstat prints any other
// figure from the pair files.
var fullMatrixNodes = 300 // a variable for TestMatrixBounded

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
