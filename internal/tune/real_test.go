package tune

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inVM skips a test that changes real host settings unless it runs inside
// the throwaway VM (go test -exec bin/rxevm), where nothing outlives the
// boot.
func inVM(t *testing.T) {
	t.Helper()
	if os.Getenv("RDMABENCH_VM") != "1" {
		t.Skip("skipping: changes the host's real settings; runs inside the VM (go test -exec bin/rxevm)")
	}
}

// irqOf returns the number of the interrupt /proc/interrupts names name.
func irqOf(t *testing.T, name string) int {
	b, err := os.ReadFile("/proc/interrupts")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[len(f)-1] == name {
			n, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no interrupt named %s in /proc/interrupts", name)
	return 0
}

// TestRealTuning tunes the guest for real, for what the guest has: the
// console's interrupt moves off CPU 3 (soft-RoCE has none of its own),
// and the governor and idle states where the guest exposes them; then all
// is restored.
func TestRealTuning(t *testing.T) {
	inVM(t)
	irq := irqOf(t, "ttyS0")
	state := filepath.Join(t.TempDir(), "state.json")
	p, err := NewPlan(Options{Root: "/", CPUs: []int{3}, Device: "rxe0", IRQs: []int{irq}})
	require.NoError(t, err)
	for _, n := range p.Notes {
		t.Logf("note: %s", n)
	}
	require.NotEmpty(t, p.Changes, "the console's interrupt may land on CPU 3 at boot")
	olds := map[string]string{}
	for _, c := range p.Changes {
		t.Logf("change: %s", c)
		olds[c.Path] = read(t, "/", c.Path)
	}
	_, err = Apply(p, state)
	require.NoError(t, err)
	t.Cleanup(func() { Restore(state, RestoreOptions{Root: "/"}) }) // after a failed assertion
	for _, c := range p.Changes {
		assert.Equal(t, c.New, read(t, "/", c.Path), c.What)
	}
	eff := read(t, "/", "proc/irq/"+strconv.Itoa(irq)+"/effective_affinity_list")
	assert.NotEqual(t, "3", eff, "the kernel moved the interrupt off CPU 3")
	_, err = Restore(state, RestoreOptions{Root: "/"})
	require.NoError(t, err)
	for _, c := range p.Changes {
		assert.Equal(t, olds[c.Path], read(t, "/", c.Path), c.What)
	}
}
