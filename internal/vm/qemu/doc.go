// Package qemu runs one guest under QEMU: its command line (serial ports,
// 9p shares, the fleet NIC, QMP), and a boot watched over the guest's
// console, with the bounds that tell a hung boot from a slow one.
package qemu
