package rdmacore

import "syscall"

// Errno is the errno in a C call's non-zero return value: libibverbs
// returns it positive, some providers and the module's C wrappers
// negative.
func Errno(rc int) syscall.Errno {
	if rc < 0 {
		rc = -rc
	}
	return syscall.Errno(rc)
}
