package hostinfo

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

// TestCollectInVM reads the real soft-RoCE guest (go test -exec
// bin/rxevm), whose setup rxevm fixes: rxe0 on a veth, QEMU under TCG
// with -smp 4 and tsc=reliable, no cpufreq, no cpuidle driver, root.
func TestCollectInVM(t *testing.T) {
	if os.Getenv(env.VarVM) != "1" {
		t.Skip("skipping: checks the soft-RoCE VM's own setup; runs inside it (go test -exec bin/rxevm)")
	}
	r := Collect(Options{Device: "rxe0", CPUs: []int{2, 3}})
	l := lineMap(r)
	for _, line := range r.Lines {
		t.Log(line)
	}
	assert.Equal(t, "rdma_rxe", l["rdma-driver"])
	assert.Equal(t, "none", l["rdma-numa-node"])
	assert.Equal(t, "no irqs", l["irq-affinity"])
	assert.Equal(t, "qemu", l["virtualization"])
	assert.Equal(t, "tsc", l["clocksource"])
	assert.Equal(t, "none", l["pm-qos"], "root reads /dev/cpu_dma_latency")
	assert.Equal(t, "none", l["cpu-idle-driver"])
	assert.Regexp(t, `^\d+\.\d+$`, l["rdma-core"])
	// rxevm probed its host before the boot: always noted, and warned
	// about when the host's CPUs slow each other.
	keys := map[string]string{}
	for _, n := range r.Notes {
		keys[n.Key] = n.Value
	}
	require.Contains(t, keys, "host-cpu-contention", "rxevm passes %s", env.VarHostCPUContention)
	_, err := ParseContention(keys["host-cpu-contention"])
	assert.NoError(t, err)
	assert.Contains(t, keys, "clock-read", "the clock read is timed where it runs")
	assert.Equal(t, []string{"cpu-idle", "vm"}, slices.DeleteFunc(checks(r), func(c string) bool { return c == "host-cpu-contention" }))
	for _, w := range r.Warnings {
		t.Log(w)
	}
}

// Example_wiring shows what a benchmark's parent prints before b.Run: the
// lines with its own, then the warnings, once per process.
func Example_wiring() {
	r := Collect(Options{FS: fakeHostForExample(), Device: "mlx5_0", CPUs: []int{1}, GOMAXPROCS: 8,
		Getenv: func(string) string { return "" }})
	for _, l := range r.Lines[:4] {
		fmt.Println(l)
	}
	for _, w := range r.Warnings {
		fmt.Print(w.Format())
	}
	// Output:
	// cpu-model: Example CPU
	// cpu-smt: unknown
	// cpu-smt-siblings: one cpu
	// cpu-numa-node: unknown
	// # warning (cpu-governor): cpufreq governor powersave on CPU 1: the clock speed follows load, so latency depends on how long the loop has spun
	// #   fix: set the performance governor as root: rdmatune apply (undo: rdmatune restore), or sudo cpupower -c 1 frequency-set -g performance
}

func fakeHostForExample() fstest.MapFS {
	return fstest.MapFS{
		"proc/cpuinfo": file("model name\t: Example CPU\n"),
		"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": file("powersave\n"),
	}
}
