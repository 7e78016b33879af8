package vm

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSweepTmp: a session directory whose lock is free (its rxevm was
// SIGKILLed) is removed; a live session's, one without the lock file
// and one of another name are not.
func TestSweepTmp(t *testing.T) {
	root := t.TempDir()
	killed, release, err := sessionTmp(root, "rxevm-")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(killed, "initrd.cpio"), make([]byte, 1<<20), 0o644)
	release() // SIGKILL: the lock goes with the process, the directory stays
	live, unlock, err := sessionTmp(root, "rxevm-fleet-")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	foreign := filepath.Join(root, "rxevm-someone")
	os.Mkdir(foreign, 0o755)
	other := filepath.Join(root, "other-1")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, tmpLock), nil, 0o644)

	removed := sweepTmp(root)
	if !slices.Equal(removed, []string{killed}) {
		t.Errorf("removed %q, want %q", removed, killed)
	}
	for _, d := range []string{live, foreign, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if _, err := os.Stat(killed); err == nil {
		t.Errorf("%s left", killed)
	}
}
