// Package fleettest runs rdmabench across several soft-RoCE VMs, each with
// its own kernel and NIC (cmd/rxevm -nodes), and fleet mode under a real
// Slurm there (rxevm -slurm). The tests boot VMs for minutes, so they run
// only with RDMABENCH_FLEET_TEST=1 (make test-fleet), and then fail, not
// skip, when QEMU or busybox is missing.
package fleettest
