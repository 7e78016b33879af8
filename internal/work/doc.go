// Package work counts the instructions a measured loop executes, user and
// kernel, as the work per operation that sits beside its time. Under
// emulation time follows the host, but the instructions executed do not:
// two runs of one build count the same work, so a change of a fraction of
// a percent shows where time cannot resolve a few percent (docs/work.md).
//
// Two sources count. In rxevm's VM with -insns, a QEMU plugin
// (internal/vm/insns) counts between marker instructions the C loops
// execute (internal/loops): the user instructions of the measuring threads,
// except the polls of a wait that found nothing, and every vCPU's kernel
// instructions while a loop runs. On a host whose PMU the process may read,
// perf_event_open counts the measuring thread's instructions:u and
// instructions:k, its spins included (hardware counters cannot leave them
// out). Open picks the first that works and says why none does.
package work
