// Package rdmalattest holds what the tests of more than one package do
// with rdmalat's engines: a peer that goes away mid-run, an address where
// no peer listens, a B that keeps the metrics Measure reports. Only tests
// import it.
package rdmalattest

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/rdmalat"
)

// NextAfterPeerGone starts a run of p, completes one round trip, stops
// p's responder (the peer goes away mid-run) and calls Next until it
// fails: it returns that error and how long the failing wait took. The
// run's own timeout (p.Timeout) bounds the wait.
func NextAfterPeerGone(t testing.TB, p *rdmalat.Pair) (time.Duration, error) {
	t.Helper()
	run, err := p.Start(2, 0)
	require.NoError(t, err)
	defer run.Close()
	_, err = run.Next()
	require.NoError(t, err)
	_, err = p.Responder.Stop()
	require.NoError(t, err)
	start := time.Now()
	for err == nil {
		_, err = run.Next()
	}
	return time.Since(start), err
}

// ClosedPort returns 127.0.0.1:1, where nothing listens on a test host.
// Port 1, not a port a listener just closed: the kernel hands a freed
// ephemeral port to the next listener, and another package's test running
// at the same time once took it (and never answered).
func ClosedPort(t testing.TB) string {
	t.Helper()
	const addr = "127.0.0.1:1"
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("something listens on %s; these tests need a port where nothing does", addr)
	}
	return addr
}

// MetricsB is an rdmalat.B that runs a set number of iterations and keeps
// the metrics reported, for tests that call rdmalat.Measure outside a
// benchmark.
type MetricsB struct {
	Metrics map[string]float64 // unit -> the value last reported
	t       *testing.T
	n       int
}

// NewMetricsB returns a MetricsB whose Loop runs n iterations and whose
// Fatal, Helper, Name and Logf are t's.
func NewMetricsB(t *testing.T, n int) *MetricsB {
	return &MetricsB{Metrics: map[string]float64{}, t: t, n: n}
}

func (b *MetricsB) Helper()                             { b.t.Helper() }
func (b *MetricsB) Fatal(args ...any)                   { b.t.Fatal(args...) }
func (b *MetricsB) ReportAllocs()                       {}
func (b *MetricsB) ReportMetric(v float64, unit string) { b.Metrics[unit] = v }
func (b *MetricsB) Name() string                        { return b.t.Name() }
func (b *MetricsB) Logf(format string, args ...any)     { b.t.Logf(format, args...) }
func (b *MetricsB) Loop() bool {
	b.n--
	return b.n >= 0
}
