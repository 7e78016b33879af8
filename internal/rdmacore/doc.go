// Package rdmacore is where the module's three cgo packages meet: verbs
// (libibverbs' objects), internal/loops (the measured loops, in C) and
// internal/rdmacm (librdmacm). It holds the way to the C object behind a
// verbs value (Pointer) and the one wait on a channel's file descriptor
// (WaitReadable); the one error type of an rdma-core call is verbs.Error.
//
// Package verbs keeps its C pointers unexported: a public method returning
// an unsafe.Pointer would be part of its API for every user of the module.
// Instead verbs registers, once at init, the function that Pointer calls,
// so only packages inside this module can reach the pointers, and only
// through here.
package rdmacore
