// Package latency holds rdmabench's statistics: a Recorder that takes
// round-trip samples in constant memory, the Summary it gives (min, max,
// mean, standard deviation and nearest-rank percentiles, with warnings
// for percentiles that have too few samples behind them), the metrics a
// benchmark reports, a raw-sample writer and a text table. It is pure Go,
// with no cgo and no testing import, so that any program can use it (the
// way golang.org/x/perf/benchmath is used); see Recorder for the exact
// definitions.
package latency
