package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// DefaultStatePath is where rdmatune keeps what it changed: /run is
// cleared at boot, when every setting it changes is back to its default.
const DefaultStatePath = "/run/rdmabench-tune.json"

// ErrTuned reports a state file left by an earlier Apply: tuning again
// would record the tuned values as the ones to restore.
var ErrTuned = errors.New("the host is already tuned")

// Apply makes p's changes. It first writes them all, with their old
// values, to a new file at statePath (it refuses with ErrTuned when that
// file exists), then makes each one; a change the kernel refuses (some
// interrupts cannot move) is reported in the error and dropped from the
// state, the others stay made. It returns the changes made.
func Apply(p Plan, statePath string) ([]Change, error) {
	if err := createState(statePath, p); err != nil {
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

// Restore puts back every change recorded at statePath, newest first, and
// removes the file. A value the kernel refuses stays in the file, so
// Restore can be run again.
func Restore(statePath string) ([]Change, error) {
	p, err := LoadState(statePath)
	if err != nil {
		return nil, err
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
	return restored, nil
}

// LoadState reads the state file at statePath.
func LoadState(statePath string) (Plan, error) {
	b, err := os.ReadFile(statePath)
	if errors.Is(err, fs.ErrNotExist) {
		return Plan{}, fmt.Errorf("tune: nothing to restore: %s does not exist (the host was not tuned, or already restored)", statePath)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("tune: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil || p.Root == "" {
		return Plan{}, fmt.Errorf("tune: %s is not a tuning state file (%v); remove it after checking the settings by hand", statePath, err)
	}
	return p, nil
}

func createState(statePath string, p Plan) error {
	b, err := marshal(p)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(statePath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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

// saveState replaces the state file atomically.
func saveState(statePath string, p Plan) error {
	b, err := marshal(p)
	if err != nil {
		return err
	}
	tmp := statePath + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	if err := os.Rename(tmp, statePath); err != nil {
		os.Remove(tmp)
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
