package env

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeIsolated points the isolated-CPU list at a file holding list for the
// rest of the test.
func fakeIsolated(t *testing.T, list string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "isolated")
	require.NoError(t, os.WriteFile(p, []byte(list), 0o644))
	saved := isolatedPath
	isolatedPath = p
	t.Cleanup(func() { isolatedPath = saved })
}

// TestCheckCPUsIsolated: CPUs the kernel isolates (isolcpus=) are in no
// inherited affinity mask, yet may be named; others outside the mask are
// still refused, the message naming both kinds.
func TestCheckCPUsIsolated(t *testing.T) {
	allowed, isolated := []int{0, 1}, []int{2, 3}
	assert.NoError(t, checkCPUs(VarCPUs, []int{2, 3}, allowed, isolated))
	assert.NoError(t, checkCPUs(VarCPUs, []int{1, 3}, allowed, isolated))
	assert.EqualError(t, checkCPUs(VarCPUs, []int{3, 4}, allowed, isolated),
		"RDMABENCH_CPUS=3,4: this process may run on CPUs 0-1 and the isolated 2-3; e.g. RDMABENCH_CPUS=0,1 or none")

	// The kernel's file, as sysfs writes it: a list, or an empty line.
	fakeIsolated(t, "2-3,6\n")
	assert.Equal(t, []int{2, 3, 6}, isolatedCPUs())
	fakeIsolated(t, "\n")
	assert.Nil(t, isolatedCPUs())
	fakeIsolated(t, "garbage\n")
	assert.Nil(t, isolatedCPUs(), "an unreadable list isolates nothing")
	isolatedPath = filepath.Join(t.TempDir(), "missing")
	assert.Nil(t, isolatedCPUs())

	// Against this process's real mask: a CPU beyond it is refused until
	// the (fake) sysfs lists it as isolated.
	mask, err := AllowedCPUs()
	require.NoError(t, err)
	beyond := slices.Max(mask) + 1
	err = CheckCPUs(VarCPUs, []int{beyond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "this process may run on CPUs "+FormatCPUList(mask)+";")
	fakeIsolated(t, strconv.Itoa(beyond)+"\n")
	assert.NoError(t, CheckCPUs(VarCPUs, []int{beyond}))
	c, err := LoadFrom(func(name string) string {
		if name == VarCPUs {
			return strconv.Itoa(beyond)
		}
		return ""
	})
	require.NoError(t, err)
	assert.NoError(t, c.Check(), "%s=%d, an isolated CPU", VarCPUs, beyond)
}

// TestIsolatedCPUsInVM, in a guest booted with isolcpus= (make test-vm
// boots one: rxevm -append isolcpus=1): the isolated CPU is outside this
// process's inherited mask, RDMABENCH_CPUS may name it, and a thread
// pinned there runs there.
func TestIsolatedCPUsInVM(t *testing.T) {
	if os.Getenv(VarVM) != "1" {
		t.Skip("skipping: needs a guest booted with isolcpus= (make test-vm)")
	}
	isolated := isolatedCPUs()
	if len(isolated) == 0 {
		t.Skip("skipping: this guest isolates no CPU; make test-vm boots one with rxevm -append isolcpus=1")
	}
	mask, err := AllowedCPUs()
	require.NoError(t, err)
	cpu := isolated[len(isolated)-1]
	require.NotContains(t, mask, cpu, "the kernel leaves isolated CPUs out of inherited masks: nothing to test")
	require.NoError(t, CheckCPUs(VarCPUs, []int{cpu}))
	c, err := LoadFrom(func(name string) string {
		if name == VarCPUs {
			return strconv.Itoa(cpu)
		}
		return ""
	})
	require.NoError(t, err)
	require.NoError(t, c.Check())

	ran := make(chan int, 1)
	go func() {
		restore, err := PinTo(cpu).PinThread()
		if err != nil {
			t.Error(err)
			ran <- -1
			return
		}
		defer restore()
		ran <- runningOn(t)
	}()
	assert.Equal(t, cpu, <-ran, "the pinned thread runs on isolated CPU %d", cpu)
}

// runningOn returns the CPU the calling thread last ran on: field 39 of
// /proc/thread-self/stat.
func runningOn(t *testing.T) int {
	b, err := os.ReadFile("/proc/thread-self/stat")
	require.NoError(t, err)
	// The command name (field 2) may hold spaces: count after its ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(f[39-3])
	require.NoError(t, err)
	return n
}
