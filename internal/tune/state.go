package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultStatePath is where rdmatune keeps what it changed: /run is
// cleared at boot, when every setting it changes is back to its default.
const DefaultStatePath = "/run/rdmabench-tune.json"

// ErrTuned reports a state file left by an earlier Apply: tuning again
// would record the tuned values as the ones to restore.
var ErrTuned = errors.New("the host is already tuned")

// Apply makes p's changes. It first writes them all, with their old
// values, the host name and the boot id, to a new file at statePath (it
// refuses with ErrTuned when that file exists, or when the root's lock
// names another state file still present), then makes each one; a change
// the kernel refuses (some interrupts cannot move) is reported in the error
// and dropped from the state, the others stay made. It returns the changes
// made.
func Apply(p Plan, statePath string) ([]Change, error) {
	for _, c := range p.Changes {
		if err := checkChange(c); err != nil {
			return nil, fmt.Errorf("tune: %w", err)
		}
	}
	statePath, err := filepath.Abs(statePath)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	l, err := lockRoot(p.Root)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	if a := l.active(); a != "" && a != statePath {
		return nil, fmt.Errorf("%w (its state is in %s): run rdmatune -state %s restore first", ErrTuned, a, a)
	}
	p.Host, p.BootID = identify(p.Root)
	if err := createState(statePath, p); err != nil {
		return nil, err
	}
	if err := l.setActive(statePath); err != nil {
		os.Remove(statePath)
		return nil, err
	}
	var made []Change
	var errs []error
	for _, c := range p.Changes {
		if err := write(p.Root, c.Path, c.New); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.What, err))
			continue
		}
		made = append(made, c)
	}
	applied := p
	applied.Changes = made
	if err := saveState(statePath, applied); err != nil {
		errs = append(errs, err)
	}
	return made, errors.Join(errs...)
}

// RestoreOptions says what Restore may trust.
type RestoreOptions struct {
	// Root must be the root the state was recorded for ("" means "/").
	Root string
	// Force restores a state recorded on another host or in another boot.
	Force bool
}

// Restore puts back every change recorded at statePath, newest first, and
// removes the file. It refuses the whole file when any change names a file
// outside the allow-list (cpufreq governors, cpuidle disables, irq
// affinities), when it was recorded for another root, or (unless o.Force)
// on another host or boot. A value the kernel refuses stays in the file, so
// Restore can be run again.
//
// The root's lock is taken before the state file is read: a restore that
// waited for another apply or restore reads the state as that one left it,
// never a copy read before the wait.
func Restore(statePath string, o RestoreOptions) ([]Change, error) {
	root := o.Root
	if root == "" {
		root = "/"
	}
	abs, err := filepath.Abs(statePath)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	l, err := lockRoot(root)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	p, err := LoadState(statePath)
	if err != nil {
		return nil, err
	}
	if filepath.Clean(p.Root) != filepath.Clean(root) {
		return nil, fmt.Errorf("tune: %s was recorded for -root %s, not %s: run rdmatune -root %s -state %s restore",
			statePath, p.Root, root, p.Root, statePath)
	}
	for _, c := range p.Changes {
		if err := checkChange(c); err != nil {
			return nil, fmt.Errorf("tune: %s is not rdmatune's state, nothing restored: %w", statePath, err)
		}
	}
	if err := CheckIdentity(statePath, p); err != nil && !o.Force {
		return nil, fmt.Errorf("tune: %w", err)
	}
	if a := l.active(); a != "" && a != abs && !o.Force {
		return nil, fmt.Errorf("tune: %w: %s is not the tuning in force, %s is: run rdmatune -state %s restore (or -force to replay %s anyway)",
			ErrStale, statePath, a, a, statePath)
	}
	var restored, failed []Change
	var errs []error
	for _, c := range slices.Backward(p.Changes) {
		if err := write(p.Root, c.Path, c.Old); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s to %s: %w", c.What, c.Old, err))
			failed = append(failed, c)
			continue
		}
		restored = append(restored, c)
	}
	if len(failed) > 0 {
		slices.Reverse(failed)
		p.Changes = failed
		if err := saveState(statePath, p); err != nil {
			errs = append(errs, err)
		}
		return restored, errors.Join(errs...)
	}
	if err := os.Remove(statePath); err != nil {
		return restored, fmt.Errorf("tune: %w", err)
	}
	if l.active() == "" { // it named this state, now gone, or nothing
		l.setActive("")
	}
	return restored, nil
}

// ErrStale reports a state file other than the one of the tuning in force
// (recorded in the root's lock): its old values are not the host's now.
var ErrStale = errors.New("stale state file")

// maxState bounds a state file: a few hundred changes of a large host
// take tens of kilobytes.
const maxState = 1 << 20

// LoadState reads the state file at statePath: a regular file (never
// through a symlink) of at most a megabyte.
func LoadState(statePath string) (Plan, error) {
	b, err := readState(statePath)
	if errors.Is(err, fs.ErrNotExist) {
		return Plan{}, fmt.Errorf("tune: nothing to restore: %s does not exist (the host was not tuned, or already restored)", statePath)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("tune: %w", err)
	}
	return ParseState(b, statePath)
}

// ParseState parses a state file's contents; name names it in errors.
// Every change must name a file rdmatune writes, with values it writes.
func ParseState(b []byte, name string) (Plan, error) {
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil || p.Root == "" {
		return Plan{}, fmt.Errorf("tune: %s is not a tuning state file (%v); remove it after checking the settings by hand", name, err)
	}
	for _, c := range p.Changes {
		if err := checkChange(c); err != nil {
			return Plan{}, fmt.Errorf("tune: %s is not rdmatune's state, nothing restored: %w", name, err)
		}
	}
	return p, nil
}

// readState reads a state file without following a symlink at it, and
// only when it is a regular file within maxState bytes.
func readState(statePath string) ([]byte, error) {
	f, err := os.OpenFile(statePath, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", statePath, fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxState+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxState {
		return nil, fmt.Errorf("%s is over %d bytes: not a tuning state file", statePath, maxState)
	}
	return b, nil
}

func createState(statePath string, p Plan) error {
	b, err := marshal(p)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(statePath, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w (its state is in %s): run rdmatune restore first", ErrTuned, statePath)
	}
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(statePath)
		return fmt.Errorf("tune: writing %s: %w", statePath, err)
	}
	return nil
}

// saveState replaces the state file atomically, by way of a new file made
// with O_EXCL beside it (never a name planted in advance, never through a
// symlink).
func saveState(statePath string, p Plan) error {
	b, err := marshal(p)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(statePath), filepath.Base(statePath)+".new*")
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	_, err = f.Write(b)
	err = errors.Join(err, f.Chmod(0o644), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), statePath)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("tune: %w", err)
	}
	return nil
}

func marshal(p Plan) ([]byte, error) {
	p.Notes = nil
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	return append(b, '\n'), nil
}

func readTrim(fsys fs.FS, name string) (string, error) {
	b, err := fs.ReadFile(fsys, name)
	return strings.TrimSpace(string(b)), err
}
