package tune

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

// FakeRoot writes a fake sysfs and /proc for a four-CPU host under a new
// directory: powersave on every CPU, states POLL, C1 (2 us) and C6
// (133 us, disabled on CPU 3), device mlx5_0 with irqs 40 (may land
// anywhere) and 41 (CPU 0 only), and irq 9 on CPUs 2-3 only.
func fakeRoot(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"sys/devices/system/cpu/online":                  "0-3",
		"sys/class/infiniband/mlx5_0/device/msi_irqs/40": "msix",
		"sys/class/infiniband/mlx5_0/device/msi_irqs/41": "msix",
		"proc/irq/40/smp_affinity_list":                  "0-3",
		"proc/irq/41/smp_affinity_list":                  "0",
		"proc/irq/9/smp_affinity_list":                   "2-3",
	}
	for c := range 4 {
		d := fmt.Sprintf("sys/devices/system/cpu/cpu%d/", c)
		files[d+"cpufreq/scaling_governor"] = "powersave"
		files[d+"cpufreq/scaling_available_governors"] = "performance powersave"
		for i, s := range []string{"POLL 0", "C1 2", "C6 133"} {
			name, lat, _ := strings.Cut(s, " ")
			sd := d + fmt.Sprintf("cpuidle/state%d/", i)
			files[sd+"name"], files[sd+"latency"], files[sd+"disable"] = name, lat, "0"
		}
	}
	files["sys/devices/system/cpu/cpu3/cpuidle/state2/disable"] = "1"
	for name, v := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(v+"\n"), 0o644))
	}
	return root
}

func read(t *testing.T, root, name string) string {
	b, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func TestPlanApplyRestore(t *testing.T) {
	// The fake root is the whole host here: in the VM, rxevm's probe of the
	// real host would add its own contention warning.
	t.Setenv(env.VarHostCPUContention, "")
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	p, err := NewPlan(Options{Root: root, CPUs: []int{2, 3}, Device: "mlx5_0", IRQs: []int{9}})
	require.NoError(t, err)
	var got []string
	for _, c := range p.Changes {
		got = append(got, c.String())
	}
	assert.Equal(t, []string{
		"CPU 2 governor: powersave -> performance",
		"CPU 2 idle state C1 (2 us) disable: 0 -> 1",
		"CPU 2 idle state C6 (133 us) disable: 0 -> 1",
		"CPU 3 governor: powersave -> performance",
		"CPU 3 idle state C1 (2 us) disable: 0 -> 1",
		// irq 9 may land only on measuring CPUs: it goes to the others.
		"irq 9 affinity: 2-3 -> 0-1",
		"irq 40 affinity: 0-3 -> 0-1",
	}, got)
	assert.Empty(t, p.Notes)

	before := hostinfo.Collect(hostinfo.Options{FS: os.DirFS(root), Device: "mlx5_0", CPUs: []int{2, 3}})
	made, err := Apply(p, state)
	require.NoError(t, err)
	assert.Len(t, made, len(p.Changes))
	assert.Equal(t, "performance", read(t, root, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"))
	assert.Equal(t, "powersave", read(t, root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"), "a CPU not measured is left alone")
	assert.Equal(t, "1", read(t, root, "sys/devices/system/cpu/cpu2/cpuidle/state2/disable"))
	assert.Equal(t, "0", read(t, root, "sys/devices/system/cpu/cpu2/cpuidle/state0/disable"), "POLL stays")
	assert.Equal(t, "0-1", read(t, root, "proc/irq/40/smp_affinity_list"))
	assert.Equal(t, "0", read(t, root, "proc/irq/41/smp_affinity_list"))
	// What the checks warned about before is gone.
	after := hostinfo.Collect(hostinfo.Options{FS: os.DirFS(root), Device: "mlx5_0", CPUs: []int{2, 3}})
	assert.Len(t, before.Warnings, 3, "%v", before.Warnings)
	assert.Empty(t, after.Warnings)

	_, err = Apply(p, state)
	assert.ErrorIs(t, err, ErrTuned)

	restored, err := Restore(state, RestoreOptions{Root: root})
	require.NoError(t, err)
	assert.Len(t, restored, len(made))
	assert.Equal(t, "powersave", read(t, root, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"))
	assert.Equal(t, "0", read(t, root, "sys/devices/system/cpu/cpu2/cpuidle/state2/disable"))
	assert.Equal(t, "1", read(t, root, "sys/devices/system/cpu/cpu3/cpuidle/state2/disable"), "disabled before, disabled after")
	assert.Equal(t, "0-3", read(t, root, "proc/irq/40/smp_affinity_list"))
	assert.Equal(t, "2-3", read(t, root, "proc/irq/9/smp_affinity_list"))
	assert.NoFileExists(t, state)

	_, err = Restore(state, RestoreOptions{Root: root})
	assert.ErrorContains(t, err, "nothing to restore")
}

// A change the kernel refuses is reported and left out of the state; the
// rest are made and restored.
func TestApplyPartial(t *testing.T) {
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	p, err := NewPlan(Options{Root: root, CPUs: []int{2}, IRQs: []int{9}})
	require.NoError(t, err)
	irq := filepath.Join(root, "proc/irq/9/smp_affinity_list")
	require.NoError(t, os.Remove(irq))
	require.NoError(t, os.Mkdir(irq, 0o755)) // writing it fails
	made, err := Apply(p, state)
	assert.ErrorContains(t, err, "irq 9 affinity")
	assert.Len(t, made, len(p.Changes)-1)
	s, err := LoadState(state)
	require.NoError(t, err)
	assert.Equal(t, made, s.Changes)
	_, err = Restore(state, RestoreOptions{Root: root})
	require.NoError(t, err)
	assert.Equal(t, "powersave", read(t, root, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"))
}

func TestPlanNotes(t *testing.T) {
	root := t.TempDir()
	p, err := NewPlan(Options{Root: root, CPUs: []int{1}, Device: "rxe0"})
	require.NoError(t, err)
	assert.Empty(t, p.Changes)
	assert.Equal(t, []string{
		"CPU 1 has no cpufreq: governor left alone",
		"CPU 1 has no cpuidle states in sysfs: idle left alone (PM QoS or idle=poll can still keep it polling)",
		"rxe0 has no interrupts of its own (soft-RoCE rides on its netdev): none moved",
	}, p.Notes)
	_, err = NewPlan(Options{Root: root})
	assert.ErrorContains(t, err, "-cpus 2,3")
	_, err = NewPlan(Options{Root: root, CPUs: []int{-1}})
	assert.ErrorContains(t, err, "-1 is not a CPU number")
}

func TestLoadStateBad(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(state, []byte("hello"), 0o644))
	_, err := LoadState(state)
	assert.ErrorContains(t, err, "is not a tuning state file")
}
