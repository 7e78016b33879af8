package debcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// Lock claims dir as an rxevm cache (Claim: a directory holding anything
// else is refused) and takes an exclusive flock on dir/lock, waiting (and
// saying so) while another rxevm holds it. Closing the returned file
// releases it.
func Lock(ctx context.Context, dir string, logf func(format string, args ...any)) (*os.File, error) {
	if err := Claim(dir, logf); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for waited := false; ; waited = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if !waited {
			logf("waiting for another rxevm to finish with the cache %s", dir)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
