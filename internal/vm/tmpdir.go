package vm

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// tmpLock is the file in a session's temporary directory that the
// session holds locked: a directory whose lock is free was left by an
// rxevm that was killed (SIGKILL leaves no time to remove it).
const tmpLock = ".rxevm-session.lock"

// sessionTmp makes the session's temporary directory under root, named
// pattern*, and holds its lock; close releases the lock (the caller
// removes the directory). The lock file is made and locked under another
// name, then renamed, so that a sweep never sees it unlocked.
func sessionTmp(root, pattern string) (dir string, close func(), err error) {
	dir, err = os.MkdirTemp(root, pattern)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp(dir, "lock")
	if err == nil {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			err = os.Rename(f.Name(), filepath.Join(dir, tmpLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { f.Close() }, nil
}

// sweepTmp removes the temporary directories under root that killed
// rxevm sessions left: named rxevm-*, owned by this user, holding a
// session lock that nobody holds. A directory without the lock file
// (another program's, or an older rxevm's) is left alone. It returns what
// it removed.
func sweepTmp(root string) []string {
	dirs, _ := filepath.Glob(filepath.Join(root, "rxevm-*"))
	var removed []string
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || !strings.HasPrefix(filepath.Base(d), "rxevm-") {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		if abandoned(d) {
			if os.RemoveAll(d) == nil {
				removed = append(removed, d)
			}
		}
	}
	return removed
}

// abandoned reports whether d's session lock exists and is free; the lock
// is released at once, and d is removed next.
func abandoned(d string) bool {
	f, err := os.OpenFile(filepath.Join(d, tmpLock), os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}
