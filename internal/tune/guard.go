package tune

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// allowed are the only files Apply and Restore write, relative to the root,
// each with the values it may take. A state file naming anything else is
// refused whole: it was not written by rdmatune.
var allowed = []struct{ path, value *regexp.Regexp }{
	{regexp.MustCompile(`^sys/devices/system/cpu/cpu[0-9]+/cpufreq/scaling_governor$`), regexp.MustCompile(`^[a-z_]+$`)},
	{regexp.MustCompile(`^sys/devices/system/cpu/cpu[0-9]+/cpuidle/state[0-9]+/disable$`), regexp.MustCompile(`^[01]$`)},
	{regexp.MustCompile(`^proc/irq/[0-9]+/smp_affinity_list$`), regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`)},
}

// checkChange reports whether c writes an allowed file with an allowed value.
func checkChange(c Change) error {
	for _, a := range allowed {
		if a.path.MatchString(c.Path) {
			if !a.value.MatchString(c.Old) || !a.value.MatchString(c.New) {
				return fmt.Errorf("%s: value %q or %q is not one rdmatune writes there", c.Path, c.Old, c.New)
			}
			return nil
		}
	}
	return fmt.Errorf("%q is not a cpufreq governor, cpuidle disable or irq affinity file", c.Path)
}

// Filesystem magic numbers: on a real host ("/") every write must land on
// sysfs or procfs.
const (
	sysfsMagic = 0x62656572
	procMagic  = 0x9fa0
)

// write sets one sysfs or procfs value. It never creates a file and never
// follows a symlink at the file itself; under root "/" it refuses any file
// that is not on sysfs or procfs.
func write(root, name, value string) error {
	f, err := os.OpenFile(filepath.Join(root, name), os.O_WRONLY|os.O_TRUNC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if filepath.Clean(root) == "/" {
		var st unix.Statfs_t
		if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
			return err
		}
		if st.Type != sysfsMagic && st.Type != procMagic {
			return fmt.Errorf("/%s is not on sysfs or procfs", name)
		}
	}
	if _, err := f.WriteString(value); err != nil {
		return err
	}
	return f.Close()
}

// bootIDPath is the kernel's random id of the current boot, under the root.
const bootIDPath = "proc/sys/kernel/random/boot_id"

// identify returns the host name and the boot id under root ("" when the
// root has none, as in a test's fake root).
func identify(root string) (host, boot string) {
	host, _ = os.Hostname()
	b, _ := os.ReadFile(filepath.Join(root, bootIDPath))
	return host, strings.TrimSpace(string(b))
}

// ErrOtherHost reports a state file recorded on another host or in an
// earlier boot: its old values are not this host's.
var ErrOtherHost = errors.New("the state was recorded on another host or boot")

// CheckIdentity refuses p unless it was recorded on this host in this boot.
func CheckIdentity(statePath string, p Plan) error {
	host, boot := identify(p.Root)
	if p.Host == host && p.BootID == boot {
		return nil
	}
	return fmt.Errorf("%w: %s was recorded on host %q boot %q, this is host %q boot %q; "+
		"a reboot already put its settings back and another host's are not this one's: "+
		"remove the file, or pass -force to restore from it anyway", ErrOtherHost, statePath, p.Host, p.BootID, host, boot)
}

// lockName is the one lock of a root, whatever -state says: it serialises
// Apply and Restore and holds the path of the state file of the tuning in
// force, so that a second Apply with another state file refuses instead of
// recording the first one's tuned values as the old ones.
const lockName = "run/rdmabench-tune.lock"

// lockWait bounds the wait for another rdmatune's apply or restore.
const lockWait = 10 * time.Second

// hostLock is the held lock of a root.
type hostLock struct{ f *os.File }

func lockRoot(root string) (*hostLock, error) {
	p := filepath.Join(root, lockName)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &hostLock{f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("tune: lock %s: %w (another rdmatune is applying or restoring)", p, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// active returns the state file of the tuning in force, "" for none (or
// when the one recorded is gone).
func (l *hostLock) active() string {
	b := make([]byte, 4096)
	n, _ := l.f.ReadAt(b, 0)
	p := strings.TrimSpace(string(b[:n]))
	if p == "" {
		return ""
	}
	if _, err := os.Lstat(p); err != nil {
		return ""
	}
	return p
}

func (l *hostLock) setActive(statePath string) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	if statePath == "" {
		return nil
	}
	if _, err := l.f.WriteAt([]byte(statePath+"\n"), 0); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	return nil
}

func (l *hostLock) unlock() { l.f.Close() }
