package jobreport

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/fleet"
)

// loadOf returns the job's load stream size (its rdmabench-load line,
// RDMABENCH_LOAD in bytes), or "" when the job ran without one.
func loadOf(r *fleet.Results) string {
	for _, c := range r.Config {
		if v, ok := strings.CutPrefix(c, "rdmabench-load: "); ok {
			return v
		}
	}
	return ""
}

// formatLoad says in outliers.txt that bench was measured under load,
// when it was, and what the stream carried: its throughput is no latency,
// so it is neither judged nor held to -max, but a reader of the verdict
// must know the latency was taken beside it, and a pair whose stream
// carried far less than the others' was measured under a lighter load.
func formatLoad(b *strings.Builder, c *collected, bench string) {
	size := loadOf(c.results)
	if size == "" {
		return
	}
	type pairLoad struct {
		src, dst string
		mbps     float64
	}
	var loads []pairLoad
	for _, s := range c.plan.Steps() {
		if cell, ok := c.results.Cell(bench, fleet.LoadUnit, s.Src, s.Dst); ok {
			loads = append(loads, pairLoad{s.Src, s.Dst, cell.Center / 1e6})
		}
	}
	fmt.Fprintf(b, "under load: %s-byte RDMA WRITEs streamed on each pair's device beside its latency (%s, rdmabench-load %s); ", size, env.VarLoad, size)
	if len(loads) == 0 {
		fmt.Fprintf(b, "no pair reported load-MB/s\n")
		return
	}
	mbps := make([]float64, len(loads))
	for i, l := range loads {
		mbps[i] = l.mbps
	}
	med := fleet.Median(mbps)
	// The first of the lowest in plan order.
	low := slices.MinFunc(loads, func(x, y pairLoad) int { return cmp.Compare(x.mbps, y.mbps) })
	fmt.Fprintf(b, "load-MB/s median %.4g over %d pairs, lowest %.4g (%s %s); not judged, each pair's in matrix.txt\n", med, len(loads), low.mbps, low.src, low.dst)
}
