package tune

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

// TestRestoreWaitsThenReads: a restore that waits on the root's lock
// while another rdmatune restores and applies again (-cpus 1) restores
// what that apply made, not the state it would have read before waiting.
func TestRestoreWaitsThenReads(t *testing.T) {
	t.Setenv(env.VarHostCPUContention, "")
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	gov := func(cpu string) string {
		return read(t, root, "sys/devices/system/cpu/cpu"+cpu+"/cpufreq/scaling_governor")
	}
	pA, err := NewPlan(Options{Root: root, CPUs: []int{0}})
	require.NoError(t, err)
	_, err = Apply(pA, state)
	require.NoError(t, err)

	l, err := lockRoot(root)
	require.NoError(t, err)
	type result struct {
		restored []Change
		err      error
	}
	done := make(chan result, 1)
	go func() {
		r, err := Restore(state, RestoreOptions{Root: root})
		done <- result{r, err}
	}()
	time.Sleep(300 * time.Millisecond) // the restore is waiting for the lock

	// Meanwhile, under the lock: another restore, then apply -cpus 1.
	for _, c := range slices.Backward(pA.Changes) {
		require.NoError(t, write(root, c.Path, c.Old))
	}
	require.NoError(t, os.Remove(state))
	pB, err := NewPlan(Options{Root: root, CPUs: []int{1}})
	require.NoError(t, err)
	pB.Host, pB.BootID = identify(root)
	require.NoError(t, createState(state, pB))
	require.NoError(t, l.setActive(state))
	for _, c := range pB.Changes {
		require.NoError(t, write(root, c.Path, c.New))
	}
	require.Equal(t, "performance", gov("1"))
	l.unlock()

	r := <-done
	require.NoError(t, r.err)
	var what []string
	for _, c := range r.restored {
		what = append(what, c.What)
	}
	assert.Contains(t, strings.Join(what, "; "), "CPU 1 governor")
	assert.NotContains(t, strings.Join(what, "; "), "CPU 0")
	assert.Equal(t, "powersave", gov("0"))
	assert.Equal(t, "powersave", gov("1"), "the host is not left tuned")
	assert.Equal(t, "0", read(t, root, "sys/devices/system/cpu/cpu1/cpuidle/state1/disable"))
	assert.NoFileExists(t, state)
}

// TestRestoreStale: a state file other than the tuning in force is
// refused (unless forced); so are a FIFO, a huge file and a forged change.
func TestRestoreStale(t *testing.T) {
	t.Setenv(env.VarHostCPUContention, "")
	root := fakeRoot(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	p, err := NewPlan(Options{Root: root, CPUs: []int{2}})
	require.NoError(t, err)
	_, err = Apply(p, state)
	require.NoError(t, err)
	old := filepath.Join(dir, "old.json")
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(old, b, 0o644))
	_, err = Restore(old, RestoreOptions{Root: root})
	require.ErrorIs(t, err, ErrStale)
	assert.Equal(t, "performance", read(t, root, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"))
	assert.FileExists(t, state)
	_, err = Restore(state, RestoreOptions{Root: root})
	require.NoError(t, err)

	huge := filepath.Join(dir, "huge.json")
	require.NoError(t, os.WriteFile(huge, []byte(`{"root":"`+strings.Repeat("x", maxState)+`"}`), 0o644))
	_, err = LoadState(huge)
	assert.ErrorContains(t, err, "over 1048576 bytes")
	forged := filepath.Join(dir, "forged.json")
	require.NoError(t, os.WriteFile(forged, []byte(`{"root":"/","changes":[{"path":"etc/shadow","old":"x","new":"y"}]}`), 0o644))
	_, err = LoadState(forged)
	assert.ErrorContains(t, err, "is not rdmatune's state")
}
