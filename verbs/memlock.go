package verbs

import (
	"errors"
	"fmt"
	"math"
	"syscall"
)

// ErrMemlock is the cause when ibv_reg_mr fails because the process may
// not pin more memory: registering pins the region's pages, and without
// CAP_IPC_LOCK the process's pinned memory may not exceed RLIMIT_MEMLOCK
// (64 KiB for users on many distributions, 8 MiB on newer ones).
var ErrMemlock = errors.New("locked memory limit (RLIMIT_MEMLOCK) reached")

// memlock is what decides whether a registration's ENOMEM is the
// RLIMIT_MEMLOCK limit: the limits, and whether the calling thread may
// ignore them.
type memlock struct {
	known    bool   // the limits and capability could be read
	cur, max uint64 // soft and hard limits in bytes; math.MaxUint64: unlimited
	ipcLock  bool   // CAP_IPC_LOCK in the thread's effective set
}

// explainRegMR names RLIMIT_MEMLOCK, with the size needed and how to raise
// it, when ibv_reg_mr's ENOMEM comes from it: a finite limit and no
// CAP_IPC_LOCK. Other failures are returned as they are.
func explainRegMR(err error, size int, m memlock) error {
	var e *Error
	if !errors.As(err, &e) || e.Err != syscall.ENOMEM || !m.known || m.ipcLock || m.cur == math.MaxUint64 {
		return err
	}
	e.Err = fmt.Errorf("%w: %w", ErrMemlock, e.Err)
	e.Detail = fmt.Sprintf("registering %s pins it; this process may pin at most %s in all (RLIMIT_MEMLOCK, hard limit %s) and has no CAP_IPC_LOCK: "+
		"raise the limit to at least %s more than is pinned already, best unlimited: `ulimit -l unlimited` (or `ulimit -l %d`, in KiB) in the shell that starts it, "+
		"a line `* - memlock unlimited` in /etc/security/limits.conf (then log in again), LimitMEMLOCK=infinity for a systemd service, --ulimit memlock=-1 for docker; or run as root",
		kib(uint64(size)), kib(m.cur), kib(m.max), kib(uint64(size)), (m.cur+uint64(size)+1023)/1024)
	return err
}

// kib formats a byte count for the memlock message, as ulimit -l counts.
func kib(n uint64) string {
	if n == math.MaxUint64 {
		return "unlimited"
	}
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}
