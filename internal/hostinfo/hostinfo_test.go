package hostinfo

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

var fake = fstest.MapFS{
	"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor":            file("performance\n"),
	"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor":            file("powersave\n"),
	"sys/devices/system/cpu/cpu2/cpufreq/scaling_governor":            file("performance\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state0/name":                 file("POLL\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state0/disable":              file("0\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state1/name":                 file("C1\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state1/disable":              file("0\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state10/name":                file("C6\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state10/disable":             file("1\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state2/name":                 file("C1E\n"),
	"sys/devices/system/cpu/cpu0/cpuidle/state2/disable":              file("1\n"),
	"sys/class/infiniband/mlx5_0/device/msi_irqs/40":                  file("msix\n"),
	"sys/class/infiniband/mlx5_0/device/msi_irqs/41":                  file("msix\n"),
	"sys/class/infiniband/mlx5_0/device/msi_irqs/42":                  file("msix\n"),
	"proc/irq/40/smp_affinity_list":                                   file("0\n"),
	"proc/irq/41/smp_affinity_list":                                   file("1-2\n"),
	"proc/irq/42/smp_affinity_list":                                   file("8\n"),
	"proc/sys/kernel/osrelease":                                       file("6.1.0-28-amd64\n"),
	"sys/devices/system/clocksource/clocksource0/current_clocksource": file("tsc\n"),
}

func TestGovernor(t *testing.T) {
	assert.Equal(t, "performance", readGovernor(fake, 0))
	assert.Equal(t, "no cpufreq", readGovernor(fake, 7))
}

func TestIdleStates(t *testing.T) {
	// Sorted by state number (10 after 2), disabled ones marked with "-".
	assert.Equal(t, "POLL,C1,C1E-,C6-", readIdleStates(fake, 0))
	assert.Equal(t, "no cpuidle", readIdleStates(fake, 1))
}

func TestIRQAffinity(t *testing.T) {
	assert.Equal(t, "3 irqs on cpus 0-2,8", readIRQAffinity(fake, "mlx5_0"))
	assert.Equal(t, "no irqs", readIRQAffinity(fake, "rxe0"))
}

func TestKernel(t *testing.T) {
	assert.Equal(t, "6.1.0-28-amd64", readKernel(fake))
	assert.Equal(t, "unknown", readKernel(fstest.MapFS{}))
}

func TestClocksource(t *testing.T) {
	assert.Equal(t, "tsc", readClocksource(fake))
	assert.Equal(t, "unknown", readClocksource(fstest.MapFS{}))
}
