// Package env is the one home of rdmabench's configuration: every
// RDMABENCH_ environment variable is named here (Var* constants, listed
// with their defaults in the table in names.go), parsed once by Load into a typed
// Config, and resolved here (the default CPUs, the default device's rule,
// whether an absent device skips or fails a test).
//
// CPU placement lives here whole (cpus.go, cpus_linux.go): a CPU (the
// zero CPU is unpinned, PinTo(0) is CPU 0), the one reader of CPU lists
// (ParseCPUList), the default choice (DefaultCPUs, Config.PinCPUs), the
// check against the CPUs this process may use (CheckCPUs) and the
// affinity calls (CPU.Pin, CPU.PinThread, KeepOthersOff), for the
// benchmarks, rdmapeer -cpu, rdmacompare -cpus and the host tools alike.
//
// Commands and packages read the environment only through this package, so
// that a variable means the same thing to the benchmarks, the peer
// (rdmapeer) and the host tools (rdmainfo, rdmacheck, rdmatune). It imports
// neither cgo nor the testing package; the test helpers built on it are in
// package testenv. docs/variables.md is the reference for users; a test
// keeps it and that table in step.
//
// A set variable is a promise: a malformed one is an error naming the
// variable, the value and what to type instead, and a device, port or peer
// it names that cannot be used fails a test rather than skipping it.
package env
