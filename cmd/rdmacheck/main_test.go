package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

var update = flag.Bool("update", false, "rewrite golden files")

func noEnv(string) string { return "" }

// fakeHost writes a fake sysfs and /proc: a two-core host whose CPUs 0
// and 1 are siblings, the governor powersave, C6 enabled, the device's
// interrupt on CPU 1 and the HPET clocksource.
func fakeHost(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"proc/cpuinfo":                                                    "model name\t: Fake CPU @ 3.00GHz\nflags\t\t: fpu tsc\n",
		"proc/sys/kernel/osrelease":                                       "6.12.0-fake",
		"sys/devices/system/cpu/online":                                   "0-1",
		"sys/devices/system/cpu/smt/control":                              "on",
		"sys/devices/system/cpu/smt/active":                               "1",
		"sys/devices/system/cpu/cpuidle/current_driver":                   "intel_idle",
		"sys/devices/system/clocksource/clocksource0/current_clocksource": "hpet",
		"sys/class/infiniband/mlx5_0/ports/1/state":                       "4: ACTIVE",
		"sys/class/infiniband/mlx5_0/device/numa_node":                    "-1",
		"sys/class/infiniband/mlx5_0/device/msi_irqs/33":                  "msix",
		"proc/irq/33/smp_affinity_list":                                   "0-1",
		"proc/irq/33/effective_affinity_list":                             "1",
	}
	for _, c := range []string{"0", "1"} {
		d := "sys/devices/system/cpu/cpu" + c + "/"
		files[d+"topology/thread_siblings_list"] = "0-1"
		files[d+"cpufreq/scaling_governor"] = "powersave"
		files[d+"cpuidle/state0/name"], files[d+"cpuidle/state0/latency"], files[d+"cpuidle/state0/disable"] = "POLL", "0", "0"
		files[d+"cpuidle/state1/name"], files[d+"cpuidle/state1/latency"], files[d+"cpuidle/state1/disable"] = "C6", "170", "0"
	}
	for name, v := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(v+"\n"), 0o644))
	}
	return root
}

var goLines = regexp.MustCompile(`(?m)^(go-version|go-maxprocs): .*$`)

func TestGolden(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-root", fakeHost(t), "-cpus", "0,1", "-probe=false"}, &out, &errOut, noEnv)
	require.Equal(t, 0, code, errOut.String())
	got := goLines.ReplaceAllString(out.String(), "$1: X")
	golden := filepath.Join("testdata", "fakehost.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)

	// -strict turns warnings into exit status 3.
	assert.Equal(t, 3, run([]string{"-root", fakeHost(t), "-cpus", "0,1", "-probe=false", "-strict"}, &out, &errOut, noEnv))
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-cpus", "x"}, `-cpus="x": not a CPU list: "x": "x" is not a CPU number`},
		{[]string{"-device", "notexist0"}, `no RDMA device "notexist0"`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(tc.args, &out, &errOut, noEnv), tc.args)
		assert.Contains(t, errOut.String(), tc.want)
	}
}

// TestThisHost runs rdmacheck on the machine the test runs on (inside
// the VM: rxe0, with its warnings) and checks that benchfmt reads every
// line as configuration and skips the warnings.
func TestThisHost(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(nil, &out, &errOut, os.Getenv)
	require.Equal(t, 0, code, errOut.String())
	t.Logf("rdmacheck output:\n%s", out.String())
	text := out.String()
	r := benchfmt.NewReader(strings.NewReader(text+"BenchmarkX 1 1 ns/op\n"), "out")
	require.True(t, r.Scan())
	res, ok := r.Result().(*benchfmt.Result)
	require.True(t, ok, "%v", r.Result())
	nConfig := strings.Count(text, "\n") - strings.Count(text, "#")
	assert.Len(t, res.Config, nConfig, "every non-# line is a config line")
	assert.Regexp(t, `(?m)^# cpu-contention: [0-9.]+x with all busy, p90 [0-9.]+x the median, worst [0-9.]+x; CPUs \S+$`, text, "the probe ran on the two default CPUs")
	// The clock read is timed here; kvm-clock and tsc are read through
	// the vDSO, so neither warns (this machine's and the VM's).
	assert.Regexp(t, `(?m)^# clock-read: [0-9]+ ns \(as a system call: [0-9]+ ns\)$`, text)
	if cs := res.GetConfig("clocksource"); cs == "kvm-clock" || cs == "tsc" {
		assert.NotContains(t, text, "warning (clocksource)")
	}
	if os.Getenv("RDMABENCH_VM") == "1" {
		assert.Equal(t, "rxe0", res.GetConfig("rdma-device"))
		assert.Equal(t, "rdma_rxe", res.GetConfig("rdma-driver"))
		assert.Contains(t, text, "# warning (vm): ")
		assert.NotEqual(t, "unknown", res.GetConfig("rdma-core"))
	}
}
