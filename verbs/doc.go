// Package verbs is a thin, Go-shaped binding to libibverbs, the user-space
// RDMA verbs library of rdma-core.
//
// Every libibverbs object is a Go value holding an unexported pointer to its C
// struct: [Context] (struct ibv_context), [PD], [MR], [CompChannel], [CQ],
// [QP] and [AH]. Each has an idempotent, nil-safe Close. Children keep their
// parents alive, and closing a parent while children are still open fails
// with an error wrapping [ErrInUse]. Close in this order:
//
//	QPs, MRs, AHs  ->  CQs  ->  CompChannels  ->  PDs  ->  Context
//
// A runtime cleanup releases objects that become unreachable without Close,
// but only as a safety net: close what you open. [OpenObjects] counts the
// objects open in the process, for leak checks in tests.
//
// Errors are *[Error] values carrying the libibverbs call and the errno. They
// match [os.ErrNotExist] (ENOENT, ENODEV, EADDRNOTAVAIL), [os.ErrPermission]
// (EPERM, EACCES) and [errors.ErrUnsupported] (ENOSYS, EOPNOTSUPP) through
// errors.Is, besides the errno itself and the package's sentinels
// [ErrQPState] and [ErrInUse] (also EBUSY); a passed deadline matches
// [os.ErrDeadlineExceeded] and [context.DeadlineExceeded].
//
// The hot paths ([QP.PostSend], [QP.PostRecv], [CQ.Poll]) are one cgo call
// each and allocate nothing. Registered memory ([PD.AllocMR]) is mmap'd
// outside the Go heap, so libibverbs and the device may keep using it after
// a call returns.
//
// The package needs cgo and libibverbs (Debian: libibverbs-dev). Without cgo,
// or off Linux, it still builds, and every constructor fails with an error
// matching [errors.ErrUnsupported].
//
// What is exported is what a program needs to drive a device through these
// objects: their constructors, the QP transitions, the data path (post,
// poll, notify, wait), the accessors a caller or its peer needs, the error
// type and its sentinels. Attribute, work request and completion structs
// are exported with all their fields, and each enumeration with all its
// named values, whether this module reads them or not: they mirror
// libibverbs' structs and enums, and a caller compares what a device
// reports against them. A helper only this package calls stays
// unexported, and an accessor nothing calls is left out. No C type or
// pointer is exported: the module's other cgo packages reach the C
// structs through internal/rdmacore.
package verbs
