package rdmalat

import (
	"fmt"

	"github.com/rdmabench/rdmabench/hostinfo/nicstats"
)

// counterRun is the initiator's port counters when a measured run began
// (after its warm-up): Pair.Counters.
type counterRun struct {
	dev    string
	port   int
	before nicstats.Snapshot
}

// startCounters reads the counters of the initiator's port.
func startCounters(p *Pair) (*counterRun, error) {
	d := p.Local.Device()
	s, err := nicstats.Read(nicstats.SysfsRoot, d.Name, d.Port)
	if err != nil {
		return nil, fmt.Errorf("rdmalat: counters of %s port %d (RDMABENCH_COUNTERS): %w", d.Name, d.Port, err)
	}
	return &counterRun{dev: d.Name, port: d.Port, before: s}, nil
}

// report reads the counters again and reports each one that rose as a
// metric per operation (nicstats.Unit: "hw.rcvd_seq_err/op"); a counter
// absent from a result did not change. The latency metrics stay as they
// are, so a result file with counters still compares with one without.
func (c *counterRun) report(b B, ops int) error {
	after, err := nicstats.Read(nicstats.SysfsRoot, c.dev, c.port)
	if err != nil {
		return fmt.Errorf("rdmalat: counters of %s port %d (RDMABENCH_COUNTERS): %w", c.dev, c.port, err)
	}
	if ops <= 0 {
		return nil
	}
	for _, ch := range nicstats.Diff(c.before, after) {
		b.ReportMetric(float64(ch.Delta)/float64(ops), nicstats.Unit(ch.Name))
	}
	return nil
}
