package verbs

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
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

// TestMemlockPlainUser is `ulimit -l 64` as a plain user, for real: the
// test binary runs itself again as nobody (uid 65534, which has no
// capabilities at all), lowers its RLIMIT_MEMLOCK to 64 KiB and registers
// 256 KiB; the error must be ErrMemlock with the hint. (TestMemlockLimit
// drops CAP_IPC_LOCK alone, which is what the kernel checks,
// ib_umem_get's capable(CAP_IPC_LOCK); this one also runs the device
// open and the protection domain as a user.) The guest has no udev: the
// uverbs devices are made readable by all for the run, as rdma-core's
// udev rules make them on a host.
func TestMemlockPlainUser(t *testing.T) {
	const nobody = 65534
	if os.Getuid() == nobody {
		memlockPlainUserChild(t)
		return
	}
	ctx := openDevice(t)
	if !envVM() {
		t.Skip("skipping: runs itself as nobody with the uverbs devices opened to all; runs in the soft-RoCE VM only")
	}
	require.NoError(t, ctx.Close())
	devs, err := filepath.Glob("/dev/infiniband/uverbs*")
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	for _, d := range devs {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		mode := fi.Mode().Perm()
		require.NoError(t, os.Chmod(d, 0o666))
		t.Cleanup(func() { assert.NoError(t, os.Chmod(d, mode)) })
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemlockPlainUser$", "-test.v", "-test.count=1")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", nobody, out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "--- PASS: TestMemlockPlainUser")
	assert.NotContains(t, string(out), "SKIP")
}

// memlockPlainUserChild is TestMemlockPlainUser's part as nobody.
func memlockPlainUserChild(t *testing.T) {
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl))
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: 64 << 10, Max: rl.Max}))
	ctx := openDevice(t)
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	defer func() { require.NoError(t, pd.Close()) }()
	mr, err := pd.AllocMR(256<<10, AccessLocalWrite)
	if err == nil {
		_ = mr.Close()
	}
	require.Error(t, err, "256 KiB registered under a 64 KiB limit as uid %d", os.Getuid())
	t.Log(err)
	require.ErrorIs(t, err, ErrMemlock)
	assert.Contains(t, err.Error(), "registering 256 KiB pins it; this process may pin at most 64 KiB in all")
	assert.Contains(t, err.Error(), "ulimit -l")
}
