package rdmalat

import (
	"errors"
	"sync"

	"github.com/rdmabench/rdmabench/internal/work"
)

// openCounter opens the instruction counter for one Run; tests replace it
// with a fake source.
var openCounter = work.Open

// workMeter counts the instructions of one Run's measured round trips:
// from just after the warm-up (Start) to just after the responder stopped
// (Close), so that both sides' last operations are in, divided by the
// round trips run in between.
type workMeter struct {
	c    work.Counter
	ran0 uint64
	err  error // why there are no work metrics
}

// startWork opens the counter and resets it; call it on the measuring
// goroutine after the Run started (its thread is pinned then).
func startWork(r *Run) *workMeter {
	m := &workMeter{}
	if m.c, m.err = openCounter(); m.err != nil {
		return m
	}
	m.ran0 = r.RoundTrips()
	if m.err = m.c.Reset(); m.err != nil {
		m.c.Close()
		m.c = nil
	}
	return m
}

// finish reads the counter after the Run closed and returns the work per
// round trip.
func (m *workMeter) finish(r *Run) ([]work.Metric, error) {
	if m.c == nil {
		return nil, m.err
	}
	defer m.c.Close()
	n, err := m.c.Read()
	if err != nil {
		return nil, err
	}
	return n.PerOp(r.RoundTrips()-m.ran0, m.c.Source()), nil
}

// noWork holds the reasons already logged for missing work metrics.
var noWork sync.Map

// reportWork adds the work metrics to b's result line, or logs once per
// reason why there are none (absent metrics are how an older result file
// reads too, so benchstat compares either).
func reportWork(b B, m *workMeter, r *Run) {
	metrics, err := m.finish(r)
	if err != nil {
		if _, seen := noWork.LoadOrStore(err.Error(), true); !seen {
			how := ""
			if errors.Is(err, work.ErrUnavailable) {
				how = " (in the VM: rxevm -insns; see docs/work.md)"
			}
			b.Logf("no %s or %s metrics: %v%s", work.UnitUser, work.UnitKernel, err, how)
		}
		return
	}
	for _, x := range metrics {
		b.ReportMetric(x.Value, x.Unit)
	}
}
