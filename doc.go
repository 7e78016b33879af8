// Package rdmabench holds RDMA latency benchmarks that run under go test -bench.
//
// See README.md for how to run and compare them.
package rdmabench
