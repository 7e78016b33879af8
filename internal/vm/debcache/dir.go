package debcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/env"
)

// DefaultDir returns $RDMABENCH_VM_CACHE, or rdmabench/rxevm under the
// user cache directory ($XDG_CACHE_HOME or ~/.cache).
func DefaultDir() (string, error) {
	if d := os.Getenv(env.VarVMCache); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: set RDMABENCH_VM_CACHE: %w", err)
	}
	return filepath.Join(d, "rdmabench", "rxevm"), nil
}

// LockNotice is how long Lock waits before it tells the user, even
// without -v, what it waits for.
var LockNotice = 2 * time.Second

// Lock claims dir as an rxevm cache (Claim: a directory holding anything
// else is refused) and takes an exclusive flock on dir/lock, waiting while
// another rxevm holds it: at once in the progress log (logf), and after
// LockNotice through notice, which the user sees without -v; the holder
// writes its pid into the lock file so that the notice can name it.
// Closing the returned file releases it.
func Lock(ctx context.Context, dir string, logf, notice func(format string, args ...any)) (*os.File, error) {
	if err := Claim(dir, logf); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	noticed := false
	for waited := false; ; waited = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			if f.Truncate(0) == nil {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if !waited {
			logf("waiting for another rxevm to finish with the cache %s", dir)
		}
		if !noticed && time.Since(start) >= LockNotice {
			noticed = true
			// No "key: value" shape: under go test -exec this line may
			// reach benchstat, which would take it for a config line.
			notice("rxevm is waiting for the VM cache lock %s, held by another rxevm%s; it goes on when that one ends", f.Name(), holder(f))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// holder names the pid written in the lock file f, "" when none is.
func holder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return ""
	}
	return " (pid " + strconv.Itoa(pid) + ")"
}
