package verbs

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestMemlockState: the limits read are getrlimit's.
func TestMemlockState(t *testing.T) {
	if !haveCgo {
		t.Skip("skipping: built without cgo")
	}
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl))
	m := memlockState()
	assert.True(t, m.known)
	assert.Equal(t, rl.Cur, m.cur)
	assert.Equal(t, rl.Max, m.max)
}

// TestMemlockLimit registers more than RLIMIT_MEMLOCK allows on a thread
// without CAP_IPC_LOCK, as a plain user with `ulimit -l 64` would: the
// error names the limit and how to raise it. Capabilities are per thread,
// so only a locked thread, which then exits, drops CAP_IPC_LOCK; the
// limit (per process) is restored before the test ends.
func TestMemlockLimit(t *testing.T) {
	ctx := openDevice(t)
	if !envVM() {
		t.Skip("skipping: changes the process's RLIMIT_MEMLOCK; runs in the soft-RoCE VM only")
	}
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	defer func() { require.NoError(t, pd.Close()) }()

	before := OpenObjects()
	var saved unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_MEMLOCK, &saved))
	done := make(chan error, 1)
	go func() {
		// The thread is never unlocked: it exits with this goroutine.
		// Its credentials, once changed, are a new object even if set
		// back, and uverbs refuses write() (rxe's doorbell) from a
		// thread whose credentials are not the opener's
		// (ib_safe_file_access), so no later test may run on it.
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var caps [2]unix.CapUserData
		if err := unix.Capget(&hdr, &caps[0]); err != nil {
			done <- err
			return
		}
		caps[0].Effective &^= 1 << unix.CAP_IPC_LOCK
		if err := unix.Capset(&hdr, &caps[0]); err != nil {
			done <- err
			return
		}
		if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: 64 << 10, Max: saved.Max}); err != nil {
			done <- err
			return
		}
		_, regErr := pd.AllocMR(256<<10, AccessLocalWrite)
		if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &saved); err != nil { // per process
			done <- err
			return
		}
		done <- regErr
	}()
	err = <-done
	require.Error(t, err)
	t.Log(err)
	require.ErrorIs(t, err, ErrMemlock)
	assert.Contains(t, err.Error(), "registering 256 KiB pins it; this process may pin at most 64 KiB in all")
	assert.Contains(t, err.Error(), "ulimit -l")
	assert.Equal(t, before, OpenObjects(), "the failed region left nothing behind")
}
