package rdmalat

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/work"
)

// fakeCounter counts what the test says a run executed.
type fakeCounter struct {
	now    work.Counts // the running totals
	at     work.Counts // at the last Reset
	resets int
	err    error // from Read
	closed bool
}

func (f *fakeCounter) Reset() error { f.resets++; f.at = f.now; return nil }
func (f *fakeCounter) Read() (work.Counts, error) {
	return work.Counts{User: f.now.User - f.at.User, Kernel: f.now.Kernel - f.at.Kernel,
		KernelWait: f.now.KernelWait - f.at.KernelWait}, f.err
}
func (f *fakeCounter) Close() error   { f.closed = true; return nil }
func (f *fakeCounter) Source() string { return "rxevm-plugin" }

// metricsB records what a benchmark reports and logs.
type metricsB struct {
	B
	metrics map[string]float64
	logs    []string
}

func (b *metricsB) ReportMetric(n float64, unit string) { b.metrics[unit] = n }
func (b *metricsB) Logf(format string, args ...any) {
	b.logs = append(b.logs, fmt.Sprintf(format, args...))
}

// The work metrics are the counts between the Reset after the warm-up and
// the Read after Close, over the round trips run in between: here 1000
// warm-up round trips (counted before the reset, left out) and 500
// measured ones at 465 user and 14007 kernel instructions each.
func TestWorkMetrics(t *testing.T) {
	fc := &fakeCounter{now: work.Counts{User: 999, Kernel: 99999}}
	openCounter = func() (work.Counter, error) { return fc, nil }
	defer func() { openCounter = work.Open }()
	r := &Run{total: 1000}
	m := startWork(r)
	if fc.resets != 1 {
		t.Fatalf("%d resets, want 1", fc.resets)
	}
	r.total += 500
	fc.now.User += 500 * 465
	fc.now.Kernel += 500 * 14007
	fc.now.KernelWait += 500 * 3
	b := &metricsB{metrics: map[string]float64{}}
	reportWork(b, m, r)
	want := map[string]float64{work.UnitUser: 465, work.UnitKernel: 14007, work.UnitKernelWait: 3, work.UnitKernelOther: 0}
	if !maps.Equal(b.metrics, want) {
		t.Errorf("metrics %v, want %v", b.metrics, want)
	}
	if !fc.closed {
		t.Error("counter not closed")
	}
}

// Without a counter the metrics are absent (as in a result file from
// before them) and the reason is logged once, not per benchmark.
func TestWorkMetricsAbsent(t *testing.T) {
	why := fmt.Errorf("%w: test has none", work.ErrUnavailable)
	openCounter = func() (work.Counter, error) { return nil, why }
	defer func() { openCounter = work.Open }()
	noWork.Delete(why.Error())
	defer noWork.Delete(why.Error())
	b := &metricsB{metrics: map[string]float64{}}
	for range 2 {
		r := &Run{}
		reportWork(b, startWork(r), r)
	}
	if len(b.metrics) != 0 {
		t.Errorf("metrics %v without a counter", b.metrics)
	}
	if len(b.logs) != 1 || !strings.Contains(b.logs[0], "test has none") || !strings.Contains(b.logs[0], "rxevm -insns") {
		t.Errorf("logs %q: want the reason once, with what to do", b.logs)
	}

	// A counter that fails to read: no metrics, the reason logged.
	fc := &fakeCounter{err: work.ErrNoWindow}
	openCounter = func() (work.Counter, error) { return fc, nil }
	b = &metricsB{metrics: map[string]float64{}}
	noWork.Delete(work.ErrNoWindow.Error())
	defer noWork.Delete(work.ErrNoWindow.Error())
	r := &Run{}
	reportWork(b, startWork(r), r)
	if len(b.metrics) != 0 || len(b.logs) != 1 || !errors.Is(fc.err, work.ErrNoWindow) || !strings.Contains(b.logs[0], "no marked loop") {
		t.Errorf("failed read: metrics %v logs %q", b.metrics, b.logs)
	}
}
