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

	"golang.org/x/perf/benchunit"

	"github.com/rdmabench/rdmabench/env"
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
	// The rules flag a pair slower than the fastest: they hold for a time
	// only. A throughput judged by them would flag the fastest pairs.
	if _, unit := benchunit.Tidy(1, o.Metric); unit == fleet.LoadUnit {
		return fmt.Errorf("-metric %s: the load stream's throughput (%s) is shown in matrix.txt beside the latency but never judged; judge a time: p50-sec, p99-sec, min-sec or sec/op", o.Metric, env.VarLoad)
	} else if !fleet.TimeUnit(unit) {
		return fmt.Errorf("-metric %s: not a time; pairs are judged on a latency: p50-sec, p99-sec, min-sec or sec/op (as benchstat names them)", o.Metric)
	}
	return nil
}

// collected is what one plan's run left in its directory.
type collected struct {
	plan    *fleet.Plan
	results *fleet.Results
	judged  []judgedBench // one, or with rails one per rail
	// railsLeft counts the rails past maxRails, not judged.
	railsLeft int
}

// collect reads dir's plan and pair files. A planned pair with neither a
// result nor a failure file counts as failed, and so does one whose file
// is malformed or holds another pair's results (with the reason); only a
// missing or unreadable plan fails the whole report. The benchmarks
// judged are benches, or when nil judgedBenches'.
//
// Every read stops when ctx is done, and a pair file that is not a
// regular file (a FIFO would block the open) fails its pair.
func collect(ctx context.Context, dir string, o Options, benches []string) (*collected, error) {
	path := filepath.Join(dir, jobdir.PlanFile)
	plan, err := jobdir.ReadPlan(ctx, path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) { // not there, or unreadable
		return nil, fmt.Errorf("%w (not a directory of rdmafleet run?)", err)
	}
	if err != nil {
		return nil, err
	}
	// The cells of the matrix's times and load, and of the judged metric only.
	keep := func(unit string) bool { return fleet.MatrixUnit(unit) || unit == o.Metric }
	c := &collected{plan: plan, results: fleet.NewResultsOf(keep)}
	failed, err := readPairs(ctx, dir, plan, c.results)
	if err != nil {
		return nil, err
	}
	if benches == nil {
		benches = judgedBenches(c.results.Benches, o.Bench)
		if len(benches) > maxRails {
			c.railsLeft, benches = len(benches)-maxRails, benches[:maxRails]
		}
	}
	n := 0
	for _, round := range plan.Rounds {
		n += len(round)
	}
	for _, bench := range benches {
		j := judgedBench{bench: bench, measures: make([]fleet.Measure, 0, n)}
		j.rail, _ = railOf(bench)
		for r, round := range plan.Rounds {
			for _, pair := range round {
				s := fleet.Step{Pair: pair, Round: r + 1, Index: len(j.measures)}
				m := fleet.Measure{Pair: s.Pair, Round: s.Round}
				if why, ok := failed[s.Index]; ok {
					m.Failed = why
				} else if cell, ok := c.results.Cell(bench, o.Metric, s.Src, s.Dst); ok {
					m.Value = cell.Center
				} else {
					m.Failed = fmt.Sprintf("no %s result for %s in %s", o.Metric, bench, jobdir.ResultPath(dir, s))
				}
				j.measures = append(j.measures, m)
			}
		}
		c.judged = append(c.judged, j)
	}
	return c, nil
}

// analyse judges each of c's judged benchmarks, and lets their measures
// go: the half million of a 1000-node job are not needed after.
func (c *collected) analyse(th fleet.Thresholds) []fleet.Analysis {
	as := make([]fleet.Analysis, len(c.judged))
	for i := range c.judged {
		as[i] = fleet.Analyse(c.judged[i].measures, th)
		if len(c.judged) > 1 {
			as[i].Rail = c.judged[i].rail
		}
		c.judged[i].measures = nil
	}
	return as
}

// oneLine keeps a reason on one line of outliers.txt.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut bounds a reason the report makes from an error: its file names and
// quoted lines come from the job directory.
func cut(s string) string { return jobdir.CutReason(s) }

// Analyse judges the pairs of dir: one verdict, or with rails one per
// rail (judgedBenches).
func Analyse(ctx context.Context, dir string, o Options) ([]fleet.Analysis, error) {
	c, err := collect(ctx, dir, o, nil)
	if err != nil {
		return nil, err
	}
	return c.analyse(o.Thresholds), nil
}

// BadPairs returns the pairs flagged or failed on any rail of as, each
// once, in the order of as: the ones to retest.
func BadPairs(as []fleet.Analysis) []fleet.Pair {
	var pairs []fleet.Pair
	seen := map[fleet.Pair]bool{}
	for _, a := range as {
		for _, p := range a.BadPairs() {
			if !seen[p] {
				seen[p] = true
				pairs = append(pairs, p)
			}
		}
	}
	return pairs
}

// Write writes matrix.txt, outliers.txt and the heat map into dir,
// and outliers.txt to stdout, each file whole or not at all (written under
// a temporary name and renamed). It stops when ctx is done. With
// o.Limits, outliers.txt lists and counts the cells over them, and once
// every file is written the error matches ErrOverLimits.
func Write(ctx context.Context, dir string, o Options, stdout io.Writer) error {
	c, err := collect(ctx, dir, o, nil)
	if err != nil {
		return err
	}
	// The verdict first: then the half million measures of a 1000-node job
	// can go before the matrix and the heat map are drawn.
	as := c.analyse(o.Thresholds)
	err = atomicfile.Write(filepath.Join(dir, "matrix.txt"), 0o644, func(m io.Writer) error {
		fmt.Fprintf(m, "# rdmafleet: the median of each pair's results ± its 95%% confidence interval, as\n")
		fmt.Fprintf(m, "# benchstat -filter /size:S -row /src -col /dst pairs/*.txt prints them; rows run the benchmark.\n")
		if n := len(c.plan.Nodes); n > fullMatrixNodes {
			fmt.Fprintf(m, "# %d nodes, more than %d: only the judged table (%s %s, the heat map's) is written;\n", n, fullMatrixNodes, judgedNames(c.judged), o.Metric)
			fmt.Fprintf(m, "# for a node's row of another, add /src:NODE to the filter (benchstat -filter '/size:S /src:NODE').\n")
			for _, j := range c.judged {
				if err := c.results.WriteMatrixOf(m, c.plan.Nodes, j.bench, o.Metric); err != nil {
					return err
				}
			}
			return nil
		}
		return c.results.WriteMatrix(m, c.plan.Nodes)
	})
	if err != nil {
		return err
	}

	var b strings.Builder
	var re *collected
	if re, err = collect(ctx, filepath.Join(dir, jobdir.RetestDir), o, judgedNamesOf(c.judged)); errors.Is(err, os.ErrNotExist) {
		re = nil
	} else if err != nil {
		return err
	}
	if len(c.judged) > 1 {
		formatRails(&b, c.judged, as)
	}
	if c.railsLeft > 0 {
		fmt.Fprintf(&b, "%d more rails in the results are not judged (at most %d are): -judge RDMAWrite/rail=DEV/size=S judges one\n", c.railsLeft, maxRails)
	}
	for i, j := range c.judged {
		fmt.Fprintf(&b, "judged on: %s %s, %d nodes, plan %s\n", j.bench, o.Metric, len(c.plan.Nodes), c.plan.Pattern)
		formatLoad(&b, c, j.bench)
		if len(c.judged) > 1 {
			fmt.Fprintf(&b, "heat map: %s.png, .svg\n", heatmapName(j, len(c.judged), i))
		}
		as[i].Format(&b)
	}
	var over []overCell
	judged := 0
	if len(o.Limits) > 0 {
		over, judged = checkLimits(c, o.Limits)
		formatLimits(&b, o.Limits, over, judged)
	}
	for i := range c.judged {
		if re != nil && (len(c.judged) == 1 || len(as[i].BadPairs()) > 0) {
			formatRetest(&b, as[i], re.judged[i], len(re.plan.Rounds))
		}
	}
	if err := jobdir.WriteAtomic(filepath.Join(dir, "outliers.txt"), []byte(b.String())); err != nil {
		return err
	}
	io.WriteString(stdout, b.String())

	for i, j := range c.judged {
		if as[i].Measured == 0 {
			continue // nothing to draw; outliers.txt says why
		}
		if err := writeHeatmap(ctx, dir, c, j, o.Metric, heatmapName(j, len(c.judged), i)); err != nil {
			return err
		}
	}
	return limitsErr(over, judged)
}

// writeHeatmap draws j's heat map into dir as name.png and name.svg.
func writeHeatmap(ctx context.Context, dir string, c *collected, j judgedBench, metric, name string) error {
	grid := heatGrid(c.results, j.bench, metric, c.plan.Nodes)
	p, err := heatmap.New(fmt.Sprintf("%s %s, job %s", j.bench, strings.TrimSuffix(metric, "-sec"), jobOf(c.results)), "us", c.plan.Nodes, grid)
	if err != nil {
		return err
	}
	side := heatmap.Size(len(c.plan.Nodes))
	for _, format := range []string{"png", "svg"} {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := atomicfile.Write(filepath.Join(dir, name+"."+format), 0o644, func(f io.Writer) error {
			return heatmap.Save(f, p, side, format)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// judgedNamesOf returns the benchmarks of judged.
func judgedNamesOf(judged []judgedBench) []string {
	names := make([]string, len(judged))
	for i, j := range judged {
		names[i] = j.bench
	}
	return names
}

// judgedNames returns the benchmarks of judged for a line of text.
func judgedNames(judged []judgedBench) string { return strings.Join(judgedNamesOf(judged), ", ") }

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
// the first run's limits. With rails, a rail's verdict lists the pairs
// bad on that rail only: the retest measures every rail of a pair bad on
// any.
func formatRetest(b *strings.Builder, first fleet.Analysis, re judgedBench, rounds int) {
	measures := re.measures
	on := ""
	if first.Rail != "" {
		on = " rail " + first.Rail
		bad := map[fleet.Pair]bool{}
		for _, p := range first.BadPairs() {
			bad[p] = true
		}
		measures = nil
		for _, m := range re.measures {
			if bad[m.Pair] {
				measures = append(measures, m)
			}
		}
	}
	fmt.Fprintf(b, "retest%s (%d pairs in %d rounds, against the limits above):\n", on, len(measures), rounds)
	confirmed := 0
	for _, m := range measures {
		switch {
		case m.Failed != "":
			confirmed++
			fmt.Fprintf(b, "retest: %s %s%s failed again: %s\n", m.Src, m.Dst, on, m.Failed)
		case m.Value > first.MinLimit || m.Value > first.MADLimit:
			confirmed++
			fmt.Fprintf(b, "retest: %s %s%s %.2fus: still slow (confirmed)\n", m.Src, m.Dst, on, m.Value*1e6)
		default:
			fmt.Fprintf(b, "retest: %s %s%s %.2fus: within the limits now (not confirmed)\n", m.Src, m.Dst, on, m.Value*1e6)
		}
	}
	fmt.Fprintf(b, "confirmed%s: %d of %d\n", on, confirmed, len(measures))
}
