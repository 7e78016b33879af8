package jobreport

import (
	"fmt"
	"strings"
	"time"

	"golang.org/x/perf/benchunit"

	"github.com/rdmabench/rdmabench/latency"
)

// ErrOverLimits is matched (errors.Is) by Write's error when a cell is
// above one of Options.Limits; the report files are written all the same.
// It matches latency.ErrLimit too, as a run over RDMABENCH_MAX does.
var ErrOverLimits = fmt.Errorf("fleet cells over an absolute limit: %w", latency.ErrLimit)

// ParseLimits reads -max: the syntax of RDMABENCH_MAX ("p99=20us,max=1ms"),
// through the one parser, latency.ParseLimits.
func ParseLimits(v string) ([]latency.Limit, error) { return latency.ParseLimits("-max", v) }

// overCell is one cell (a pair's benchmark) above a limit.
type overCell struct {
	round    int
	src, dst string
	bench    string
	limit    latency.Limit
	value    float64 // nanoseconds
}

// checkLimits judges every cell of c, each benchmark of each measured
// pair, against limits: a cell is over when the median of its repetitions
// (the figure matrix.txt shows) is above. A single slow repetition does not
// fail a cell, as one outlying run does not move benchstat's median; to fail
// on any run, give the agents RDMABENCH_MAX. It returns the cells over,
// in plan order, and how many cells had the figure.
func checkLimits(c *collected, limits []latency.Limit) (over []overCell, judged int) {
	for _, s := range c.plan.Steps() {
		for _, bench := range c.results.Benches {
			for _, l := range limits {
				if _, ran := c.results.Cell(bench, "sec/op", s.Src, s.Dst); !ran {
					continue // a failed pair, or one without this benchmark
				}
				judged++
				scale, unit := benchunit.Tidy(1, l.Unit())
				sum, ok := c.results.Cell(bench, unit, s.Src, s.Dst)
				switch ns := sum.Center / scale; {
				case !ok: // as latency.CheckLimits: nothing shows it within
					over = append(over, overCell{s.Round, s.Src, s.Dst, bench, l, -1})
				case ns > l.Max:
					over = append(over, overCell{s.Round, s.Src, s.Dst, bench, l, ns})
				}
			}
		}
	}
	return over, judged
}

// formatLimits writes the verdict of checkLimits for outliers.txt.
func formatLimits(b *strings.Builder, limits []latency.Limit, over []overCell, judged int) {
	fmt.Fprintf(b, "absolute limits (-max %s), on each cell's median:\n", latency.FormatLimits(limits))
	for _, o := range over {
		if o.value < 0 {
			fmt.Fprintf(b, "over limit: round %d %s %s %s %s not reported (too few samples for it?) limit %v\n", o.round, o.src, o.dst, o.bench, o.limit.Stat, time.Duration(o.limit.Max))
			continue
		}
		fmt.Fprintf(b, "over limit: round %d %s %s %s %s %v > %v\n", o.round, o.src, o.dst, o.bench, o.limit.Stat,
			time.Duration(o.value).Round(time.Nanosecond), time.Duration(o.limit.Max))
	}
	fmt.Fprintf(b, "cells over the limits: %d of %d\n", len(over), judged)
}

// limitsErr is Write's error for cells over the limits, nil for none.
func limitsErr(over []overCell, judged int) error {
	if len(over) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d of %d cells (see outliers.txt)", ErrOverLimits, len(over), judged)
}
