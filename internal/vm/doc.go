// Package vm runs a program inside throwaway QEMU virtual machines with
// soft-RoCE devices: one VM with rxe0 and rxe1 (Run), or a fleet of VMs,
// each with its own kernel and rxe0 on a shared segment (RunFleet). It is
// what cmd/rxevm does, and what makes `go test -exec rxevm` work; the
// pieces live in the packages below it: image (what the guest boots),
// debcache (the Debian packages it is made of), initramfs, kernel, ldd,
// guest (the /init scripts and the serial protocol), qemu, qmp and segment.
//
// These packages are internal, not a module of their own as cilium keeps
// its VM runner vimto: they serve one command and this module's own test
// suite, they read this module's configuration (package env: the cache
// directory, the CPUs rxevm may use, the variables it passes to the guest)
// and its host probe (internal/cpuprobe), and they change with what the
// benchmarks need from the guest. Other projects get the runner itself
// with `go install github.com/rdmabench/rdmabench/cmd/rxevm@latest`; an
// importable API would be a promise nobody has asked for.
package vm
