// Package image lays out what the guest boots: the cached base initramfs
// (Debian's kernel, libibverbs, rdma-core, perftest, iproute2, busybox, the
// soft-RoCE modules and /init), the cached fleet layer for multi-VM runs
// (Slurm, munge, the NIC modules), the per-run archive (the program, its
// libraries, -include paths, testdata) and a kernel and modules the user
// built, checked before the boot.
package image
