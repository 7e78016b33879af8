// Package kernel reads what rxevm needs to know about a Linux kernel it
// boots: the release a bzImage carries, and where that kernel's modules
// are, what each needs and in which order to load them (from modules.dep,
// or from each module's .modinfo when depmod has not run). It reads files
// only; it never writes into a modules directory it was given.
package kernel
