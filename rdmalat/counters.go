package rdmalat

import (
	"fmt"

	"github.com/rdmabench/rdmabench/internal/nicstats"
	"github.com/rdmabench/rdmabench/latency"
)

// counterRun is the initiator's port counters when a measured run began
// (after its warm-up): Pair.Counters.
type counterRun struct {
	dev    string
	port   int
	before nicstats.Snapshot
}

// startCounters reads the counters of the initiator's port when
// p.Counters asks for them, and returns nil otherwise.
func startCounters(b B, p *Pair) *counterRun {
	if !p.Counters {
		return nil
	}
	d := p.Local.Device()
	s, err := nicstats.Read(nicstats.SysfsRoot, d.Name, d.Port)
	if err != nil {
		b.Fatal(fmt.Errorf("rdmalat: counters of %s port %d (RDMABENCH_COUNTERS): %w", d.Name, d.Port, err))
	}
	return &counterRun{dev: d.Name, port: d.Port, before: s}
}

// report reads the counters again and reports each one that rose as a
// metric per operation (nicstats.Unit: "hw.rcvd_seq_err/op"); a counter
// absent from a result did not change. The latency metrics stay as they
// are, so a result file with counters still compares with one without.
// Nil-safe: nothing to report.
func (c *counterRun) report(b B, ops int64) {
	if c == nil {
		return
	}
	after, err := nicstats.Read(nicstats.SysfsRoot, c.dev, c.port)
	if err != nil {
		b.Fatal(fmt.Errorf("rdmalat: counters of %s port %d (RDMABENCH_COUNTERS): %w", c.dev, c.port, err))
	}
	if ops <= 0 {
		return
	}
	for _, ch := range nicstats.Diff(c.before, after) {
		b.ReportMetric(float64(ch.Delta)/float64(ops), nicstats.Unit(ch.Name))
	}
}

// Limit is an absolute limit on a statistic of a run (RDMABENCH_MAX).
type Limit = latency.Limit

// checkLimits fails b when s is above any of limits, after the metrics
// are reported, naming each limit and the measured figure.
func checkLimits(b B, s latency.Summary, limits []Limit) {
	if err := latency.CheckLimits(s, limits); err != nil {
		b.Fatal(fmt.Errorf("%s (RDMABENCH_MAX): %w", b.Name(), err))
	}
}
