package hostinfo

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/env"
)

func noEnv(string) string { return "" }

var update = flag.Bool("update", false, "rewrite golden files")

func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
}

func dir() *fstest.MapFile { return &fstest.MapFile{Mode: fs.ModeDir | 0o755} }

func qos(us int32) *fstest.MapFile {
	return &fstest.MapFile{Data: binary.NativeEndian.AppendUint32(nil, uint32(us))}
}

// badHost is a two-node, four-CPU host set up the way that distorts
// latency: cores {0,2} and {1,3}; CPUs 0-1 on node 0 with the device,
// 2-3 on node 1; C6 enabled, powersave, one of the device's interrupts on
// CPU 2, the HPET clocksource, under QEMU.
func badHost() fstest.MapFS {
	m := fstest.MapFS{
		"proc/cpuinfo":                                                    file("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6330 CPU @ 2.00GHz\nflags\t\t: fpu tsc hypervisor\n"),
		"proc/cmdline":                                                    file("BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet -- idle=poll\n"),
		"proc/sys/kernel/osrelease":                                       file("6.1.0-28-amd64\n"),
		"dev/cpu_dma_latency":                                             qos(PMQoSNone),
		"sys/devices/system/cpu/smt/control":                              file("on\n"),
		"sys/devices/system/cpu/smt/active":                               file("1\n"),
		"sys/devices/system/cpu/online":                                   file("0-3\n"),
		"sys/devices/system/cpu/isolated":                                 file("\n"),
		"sys/devices/system/cpu/nohz_full":                                file("(null)\n"),
		"sys/devices/system/cpu/intel_pstate/no_turbo":                    file("0\n"),
		"sys/devices/system/cpu/cpuidle/current_driver":                   file("intel_idle\n"),
		"sys/devices/system/clocksource/clocksource0/current_clocksource": file("hpet\n"),
		"sys/kernel/mm/transparent_hugepage/enabled":                      file("always [madvise] never\n"),
		"sys/class/dmi/id/sys_vendor":                                     file("QEMU\n"),
		"sys/class/dmi/id/product_name":                                   file("Standard PC (Q35 + ICH9, 2009)\n"),
		"sys/devices/system/node/node0/cpulist":                           file("0-1\n"),
		"sys/class/infiniband/mlx5_0/device/numa_node":                    file("0\n"),
		"sys/class/infiniband/mlx5_0/device/driver":                       link("../../../../bus/pci/drivers/mlx5_core"),
		"sys/class/infiniband/mlx5_0/device/msi_irqs/40":                  file("msix\n"),
		"sys/class/infiniband/mlx5_0/device/msi_irqs/41":                  file("msix\n"),
		"sys/class/infiniband/mlx5_0/ports/1/state":                       file("4: ACTIVE\n"),
		"sys/module/mlx5_core/version":                                    file("24.10-1.1.4\n"),
		"proc/irq/40/smp_affinity_list":                                   file("0-3\n"),
		"proc/irq/40/effective_affinity_list":                             file("2\n"),
		"proc/irq/41/smp_affinity_list":                                   file("0-3\n"),
		"proc/irq/41/effective_affinity_list":                             file("0\n"),
		"usr/lib/x86_64-linux-gnu/libibverbs.so.1":                        link("libibverbs.so.1.14.50.0"),
	}
	for c := range 4 {
		d := fmt.Sprintf("sys/devices/system/cpu/cpu%d/", c)
		m[d+fmt.Sprintf("node%d", c/2)] = dir()
		m[d+"topology/thread_siblings_list"] = file(fmt.Sprintf("%d,%d\n", c%2, c%2+2))
		m[d+"cpufreq/scaling_governor"] = file("powersave\n")
		for i, s := range []struct {
			name string
			lat  int
		}{{"POLL", 0}, {"C1", 2}, {"C1E", 10}, {"C6", 133}} {
			sd := d + fmt.Sprintf("cpuidle/state%d/", i)
			m[sd+"name"] = file(s.name + "\n")
			m[sd+"latency"] = file(fmt.Sprintf("%d\n", s.lat))
			m[sd+"disable"] = file("0\n")
		}
	}
	m["sys/devices/system/cpu/cpu2/cpuidle/state2/disable"] = file("1\n")
	return m
}

// goodHost is badHost tuned: performance, deep states disabled, the
// interrupts away from CPUs 0-1, the TSC, bare metal.
func goodHost() fstest.MapFS {
	m := badHost()
	m["proc/cpuinfo"] = file("model name\t: Intel(R) Xeon(R) Gold 6330 CPU @ 2.00GHz\nflags\t\t: fpu tsc\n")
	delete(m, "sys/class/dmi/id/sys_vendor")
	delete(m, "sys/class/dmi/id/product_name")
	m["sys/devices/system/clocksource/clocksource0/current_clocksource"] = file("tsc\n")
	m["proc/irq/40/effective_affinity_list"] = file("3\n")
	m["proc/irq/41/effective_affinity_list"] = file("2\n")
	for c := range 4 {
		d := fmt.Sprintf("sys/devices/system/cpu/cpu%d/", c)
		m[d+"cpufreq/scaling_governor"] = file("performance\n")
		for i := 1; i < 4; i++ {
			m[d+fmt.Sprintf("cpuidle/state%d/disable", i)] = file("1\n")
		}
	}
	return m
}

func checks(r Report) []string {
	var names []string
	for _, w := range r.Warnings {
		names = append(names, w.Check)
	}
	return names
}

func lineMap(r Report) map[string]string {
	m := map[string]string{}
	for _, l := range r.Lines {
		m[l.Key] = l.Value
	}
	return m
}

// slowClock is hpet's cost as a VM measured it: a read as dear as a
// system call. fastClock is kvm-clock on the development VM: 25.8 ns
// through the vDSO, 1150 ns as a system call.
var (
	slowClock = &ClockCost{Read: 1900 * time.Nanosecond, Syscall: 2100 * time.Nanosecond}
	fastClock = &ClockCost{Read: 26 * time.Nanosecond, Syscall: 1150 * time.Nanosecond}
)

func TestCollectBadHost(t *testing.T) {
	r := Collect(Options{FS: badHost(), Device: "mlx5_0", CPUs: []int{2, 3}, GOMAXPROCS: 4,
		Getenv: func(string) string { return "" }, Clock: slowClock})
	assert.Equal(t, []string{"cpu-idle", "cpu-governor", "irq", "numa", "clocksource", "vm"}, checks(r))
	l := lineMap(r)
	assert.Equal(t, "Intel(R) Xeon(R) Gold 6330 CPU @ 2.00GHz", l["cpu-model"])
	assert.Equal(t, "on", l["cpu-smt"])
	assert.Equal(t, "no", l["cpu-smt-siblings"])
	assert.Equal(t, "1", l["cpu-numa-node"])
	assert.Equal(t, "0", l["rdma-numa-node"])
	assert.Equal(t, "C6 133us", l["cpu-idle-deepest"])
	assert.Equal(t, "POLL,C1,C1E-,C6/POLL,C1,C1E,C6", l["cpu-idle"])
	assert.Equal(t, "on", l["cpu-boost"])
	assert.Equal(t, "none", l["pm-qos"])
	assert.Equal(t, "none", l["cpu-isolated"])
	assert.Equal(t, "none", l["cpu-nohz-full"])
	assert.Equal(t, "mlx5_core 24.10-1.1.4", l["rdma-driver"])
	assert.Equal(t, "50.0", l["rdma-core"])
	assert.Equal(t, "madvise", l["transparent-hugepage"])
	assert.Equal(t, "qemu", l["virtualization"])
	assert.Equal(t, "none", l["go-debug"])
	assert.Equal(t, "4", l["go-maxprocs"])
	// The idle=poll after "--" goes to init, not the kernel.
	_, poll := readCmdlineParam(badHost(), "idle")
	assert.False(t, poll)

	// Warnings carry the values seen and what to do.
	w := r.Warnings
	assert.Contains(t, w[0].Problem, "CPUs 2-3 may enter C6 (exit latency 133 us)")
	assert.Contains(t, w[0].Fix, env.VarPMQoS+"=1")
	assert.Contains(t, w[1].Problem, "cpufreq governor powersave on CPUs 2-3")
	assert.Contains(t, w[2].Problem, "1 of mlx5_0's 2 interrupts (irq 40; every MSI vector of its PCI function counted")
	assert.Contains(t, w[3].Fix, "pin to CPUs of node 0 (0-1)")
	assert.Contains(t, w[4].Problem, "a clock read costs 1900 ns (as a system call: 2100 ns), measured here, with clocksource hpet")
	assert.Contains(t, r.Notes, Line{"clock-read", "1900 ns (as a system call: 2100 ns)"})
}

// TestClockWarningRestsOnMeasurement: the clocksource name alone warns
// of nothing; a fast read under any name does not warn, a slow one does,
// and without a measurement there is no figure and no warning.
func TestClockWarningRestsOnMeasurement(t *testing.T) {
	for _, tc := range []struct {
		source string
		clock  *ClockCost
		warn   bool
	}{
		{"kvm-clock", fastClock, false},
		{"hpet", fastClock, false}, // the figure, not the name
		{"kvm-clock", slowClock, true},
		{"tsc", slowClock, true},
		{"hpet", nil, false},
		{"tsc", &ClockCost{Read: 600, Syscall: 1200}, true}, // half a system call: the boundary
		{"tsc", &ClockCost{Read: 599, Syscall: 1200}, false},
	} {
		m := badHost()
		m["sys/devices/system/clocksource/clocksource0/current_clocksource"] = file(tc.source + "\n")
		r := Collect(Options{FS: m, Getenv: noEnv, Clock: tc.clock})
		if got := slices.Contains(checks(r), "clocksource"); got != tc.warn {
			t.Errorf("%s, %v: warned %v, want %v", tc.source, tc.clock, got, tc.warn)
		}
		if hasNote := len(r.Notes) > 0; hasNote != (tc.clock != nil) {
			t.Errorf("%s, %v: notes %v", tc.source, tc.clock, r.Notes)
		}
	}
}

// TestMeasureClockCost measures this host: both figures positive, and a
// read no dearer than a system call plus noise (where the clock is read in
// user space, far cheaper).
func TestMeasureClockCost(t *testing.T) {
	c := MeasureClockCost()
	if c.Read <= 0 || c.Syscall <= 0 {
		t.Fatalf("%+v", c)
	}
	if c.Read > 3*c.Syscall {
		t.Errorf("a clock read %v dearer than 3 system calls %v", c.Read, c.Syscall)
	}
	t.Logf("clock read %s, clocksource %s", c, readClocksource(Root))
}

func TestCollectSiblings(t *testing.T) {
	r := Collect(Options{FS: goodHost(), Device: "mlx5_0", CPUs: []int{0, 2}, Getenv: noEnv})
	assert.Equal(t, "yes", lineMap(r)["cpu-smt-siblings"])
	assert.Equal(t, []string{"irq", "numa", "smt"}, checks(r))
}

func TestCollectGoodHost(t *testing.T) {
	r := Collect(Options{FS: goodHost(), Device: "mlx5_0", CPUs: []int{0, 1}, Getenv: noEnv})
	assert.Empty(t, r.Warnings)
	assert.Equal(t, "POLL 0us", lineMap(r)["cpu-idle-deepest"])
}

// A PM QoS limit of 0 keeps the CPUs out of C1..C6 even though they are
// enabled: no idle warning, and the deepest state says so.
func TestCollectPMQoSHeld(t *testing.T) {
	m := badHost()
	m["dev/cpu_dma_latency"] = qos(0)
	r := Collect(Options{FS: m, Device: "mlx5_0", CPUs: []int{2, 3}, Getenv: noEnv})
	assert.NotContains(t, checks(r), "cpu-idle")
	l := lineMap(r)
	assert.Equal(t, "0us", l["pm-qos"])
	assert.Equal(t, "POLL 0us", l["cpu-idle-deepest"])
	m["dev/cpu_dma_latency"] = qos(20)
	assert.Equal(t, "C1E 10us/C1 2us", lineMap(Collect(Options{FS: m, CPUs: []int{3, 2}, Getenv: noEnv}))["cpu-idle-deepest"])
}

// The soft-RoCE VM: no cpuidle driver, no PCI function, no DMI vendor but
// the CPU's hypervisor flag.
func TestCollectSoftRoCEGuest(t *testing.T) {
	m := fstest.MapFS{
		"proc/cpuinfo":                                                    file("model name\t: QEMU TCG CPU version 2.5+\nflags\t\t: fpu hypervisor\n"),
		"proc/cmdline":                                                    file("console=ttyS0 quiet tsc=reliable\n"),
		"sys/class/infiniband/rxe0/parent":                                file("veth0\n"),
		"sys/module/rdma_rxe/uevent":                                      file(""),
		"sys/devices/system/cpu/cpuidle/current_driver":                   file("none\n"),
		"sys/devices/system/cpu/smt/control":                              file("notsupported\n"),
		"sys/devices/system/cpu/smt/active":                               file("0\n"),
		"sys/devices/system/cpu/cpu2/topology/thread_siblings_list":       file("2\n"),
		"sys/devices/system/clocksource/clocksource0/current_clocksource": file("tsc\n"),
	}
	r := Collect(Options{FS: m, Device: "rxe0", CPUs: []int{2, 3}, Getenv: noEnv})
	l := lineMap(r)
	assert.Equal(t, "rdma_rxe", l["rdma-driver"])
	assert.Equal(t, "none", l["rdma-numa-node"])
	assert.Equal(t, "no irqs", l["irq-affinity"])
	assert.Equal(t, "not supported", l["cpu-smt"])
	assert.Equal(t, "no cpufreq", l["cpu-governor"])
	assert.Equal(t, "no cpuidle", l["cpu-idle-deepest"])
	assert.Equal(t, "hypervisor", l["virtualization"])
	assert.Equal(t, "unknown (not readable)", l["pm-qos"])
	assert.Equal(t, []string{"cpu-idle", "vm"}, checks(r))
	assert.Contains(t, r.Warnings[0].Problem, "no cpuidle driver: idle CPUs 2-3 halt")
	// idle=poll keeps idle CPUs polling: nothing to warn about.
	m["proc/cmdline"] = file("console=ttyS0 idle=poll\n")
	assert.Equal(t, []string{"vm"}, checks(Collect(Options{FS: m, Device: "rxe0", CPUs: []int{2, 3}, Getenv: noEnv})))
	assert.Empty(t, r.Notes, "host-cpu-contention is noted only when rxevm measured it")

	// rxevm's measurement of its host: noted, and warned about above
	// ContentionThreshold.
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == env.VarHostCPUContention {
				return v
			}
			return ""
		}
	}
	shared := "1.62x with all busy, p90 1.10x the median, worst 2.50x; CPUs 0-1"
	r = Collect(Options{FS: m, Device: "rxe0", CPUs: []int{2, 3}, Getenv: env(shared)})
	assert.Equal(t, []Line{{"host-cpu-contention", shared}}, r.Notes)
	assert.NotContains(t, lineMap(r), "host-cpu-contention", "a measurement is a note, not a config line that would split benchstat's tables")
	var out strings.Builder
	require.NoError(t, r.Write(&out))
	assert.Contains(t, out.String(), "\n# host-cpu-contention: "+shared+"\n# warning (vm)")
	assert.Equal(t, []string{"vm", "host-cpu-contention"}, checks(r))
	assert.Contains(t, r.Warnings[1].Problem, "the VM's host CPUs 0-1, which run its measuring vCPUs, run a busy loop 1.62x slower with all busy than alone (worst block 2.50x): they share a core")
	unsteady := "1.02x with all busy, p90 1.40x the median, worst 1.90x; CPUs 4,9"
	r = Collect(Options{FS: m, Device: "rxe0", CPUs: []int{2, 3}, Getenv: env(unsteady)})
	assert.Equal(t, []string{"vm", "host-cpu-contention"}, checks(r))
	assert.Contains(t, r.Warnings[1].Problem, "host CPUs 4,9, which run its measuring vCPUs, vary in speed from one 5 ms block of it to the next (p90 1.40x the median)")
	r = Collect(Options{FS: m, Device: "rxe0", CPUs: []int{2, 3}, Getenv: env("1.02x with all busy, p90 1.05x the median, worst 1.30x; CPUs 4,9")})
	assert.Equal(t, "1.02x with all busy, p90 1.05x the median, worst 1.30x; CPUs 4,9", r.Notes[0].Value)
	assert.Equal(t, []string{"vm"}, checks(r), "2% is no contention")
	r = Collect(Options{FS: m, Device: "rxe0", CPUs: []int{2, 3}, Getenv: env("garbage")})
	assert.Equal(t, []string{"vm"}, checks(r), "an unreadable value is recorded, not warned about")
}

func TestContentionRoundTrip(t *testing.T) {
	c := Contention{CPUs: []int{0, 1}, Slowdown: 1.62, Unsteady: 1.2, Worst: 2.5}
	assert.Equal(t, "1.62x with all busy, p90 1.20x the median, worst 2.50x; CPUs 0-1", c.String())
	got, err := ParseContention(c.String())
	require.NoError(t, err)
	assert.Equal(t, c, got)
	got, err = ParseContention("0.98x with all busy, p90 1.01x the median, worst 1.05x; CPUs 3,7")
	require.NoError(t, err)
	assert.Equal(t, Contention{CPUs: []int{3, 7}, Slowdown: 0.98, Unsteady: 1.01, Worst: 1.05}, got)
	_, err = ParseContention("1.6x")
	assert.ErrorContains(t, err, `want the form "1.00x with all busy, p90 1.00x the median, worst 1.00x; CPUs 0-1"`)
}

func TestCollectUnpinnedNoDevice(t *testing.T) {
	r := Collect(Options{FS: badHost(), Getenv: noEnv})
	l := lineMap(r)
	assert.Equal(t, "unpinned", l["cpu-governor"])
	assert.Equal(t, "unpinned", l["cpu-smt-siblings"])
	assert.NotContains(t, l, "rdma-driver")
	assert.Equal(t, []string{"vm"}, checks(r)) // no clock measurement: no clock warning
}

// The report in benchmark output: every line is a configuration line that
// labels the result, and no warning becomes one or breaks the parse.
func TestReportInBenchmarkOutput(t *testing.T) {
	r := Collect(Options{FS: badHost(), Device: "mlx5_0", CPUs: []int{2, 3}, GOMAXPROCS: 4, Clock: slowClock,
		Getenv: func(k string) string { return map[string]string{"GODEBUG": "asyncpreemptoff=1"}[k] }})
	var out bytes.Buffer
	require.NoError(t, r.Write(&out))
	golden := filepath.Join("testdata", "report.golden")
	// go-version changes with the toolchain: keep it out of the golden file.
	got := strings.ReplaceAll(out.String(), "go-version: "+lineMap(r)["go-version"]+"\n", "go-version: GOVERSION\n")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)

	out.WriteString("BenchmarkRDMAWrite/size=2-4 \t 1000\t 12394 ns/op\t 10136 p50-ns\n")
	reader := benchfmt.NewReader(&out, "report")
	var results int
	for reader.Scan() {
		switch rec := reader.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		case *benchfmt.Result:
			results++
			var keys []string
			for _, c := range rec.Config {
				keys = append(keys, string(c.Key))
				assert.NotContains(t, string(c.Value), "fix:", "a warning became a config line")
			}
			for _, l := range r.Lines {
				assert.Contains(t, keys, l.Key)
				assert.Equal(t, l.Value, rec.GetConfig(l.Key))
			}
			assert.Len(t, keys, len(r.Lines))
		}
	}
	require.NoError(t, reader.Err())
	assert.Equal(t, 1, results)
}

func TestRDMACoreFromMaps(t *testing.T) {
	m := fstest.MapFS{"proc/self/maps": file("7f00-7f10 r-xp 00000000 08:01 123 /opt/rdma/lib/libibverbs.so.1.14.56.0\n")}
	assert.Equal(t, "56.0", readRDMACore(m))
	assert.Equal(t, "unknown", readRDMACore(fstest.MapFS{}))
	_, ok := rdmaCoreOf("libibverbs.so.1")
	assert.False(t, ok)
}

func TestFirstDevice(t *testing.T) {
	assert.Equal(t, "mlx5_0", firstDevice(badHost()))
	assert.Equal(t, "", firstDevice(fstest.MapFS{}))
}

// TestDeviceOrder: the tools list devices in libibverbs' order, the one
// the benchmark takes its default from: by ib_uverbs' numbering (the
// kernel's registration order), else naturally (mlx5_2 before mlx5_10),
// never sorted as strings.
func TestDeviceOrder(t *testing.T) {
	host := fstest.MapFS{}
	var want []string
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("mlx5_%d", i)
		want = append(want, name)
		host["sys/class/infiniband/"+name+"/ports/1/state"] = &fstest.MapFile{Data: []byte("4: ACTIVE\n")}
	}
	got, err := SysfsProbe{host}.Devices()
	require.NoError(t, err)
	assert.Equal(t, want, got, "natural order without ib_uverbs")

	// Renamed devices: registration order (uverbs numbers) wins over names.
	uverbs := fstest.MapFS{}
	for dev, n := range map[string]int{"rocep2s0": 0, "mlx5_10": 1, "ibp1s0": 2} {
		uverbs["sys/class/infiniband/"+dev+"/ports/1/state"] = &fstest.MapFile{Data: []byte("4: ACTIVE\n")}
		uverbs[fmt.Sprintf("sys/class/infiniband_verbs/uverbs%d/ibdev", n)] = &fstest.MapFile{Data: []byte(dev + "\n")}
	}
	uverbs["sys/class/infiniband/mlx5_2/ports/1/state"] = &fstest.MapFile{Data: []byte("4: ACTIVE\n")} // no uverbs: last
	got, err = SysfsProbe{uverbs}.Devices()
	require.NoError(t, err)
	assert.Equal(t, []string{"rocep2s0", "mlx5_10", "ibp1s0", "mlx5_2"}, got)
	assert.Equal(t, "rocep2s0", firstDevice(uverbs), "the tools' default is the benchmark's")

	assert.Negative(t, naturalCompare("mlx5_2", "mlx5_10"))
	assert.Negative(t, naturalCompare("efa_0", "mlx5_0"))
	assert.Zero(t, naturalCompare("rxe0", "rxe0"))
}

// TestIRQWarningCountsCompletionVectors: where the vectors' names tell
// them apart (mlx5_comp*), the warning counts only those that serve
// completion queues: the command and async vectors of every mlx5 function
// land on CPU 0 and would make it fire on every host.
func TestIRQWarningCountsCompletionVectors(t *testing.T) {
	fsys := badHost()
	fsys["proc/irq/40/mlx5_async0@pci:0000:3b:00.0"] = &fstest.MapFile{Mode: fs.ModeDir}
	fsys["proc/irq/41/mlx5_comp0@pci:0000:3b:00.0"] = &fstest.MapFile{Mode: fs.ModeDir}
	irqs := DeviceIRQs(fsys, "mlx5_0")
	require.Len(t, irqs, 2)
	assert.False(t, irqs[0].Completion())
	assert.True(t, irqs[1].Completion())
	assert.Equal(t, "mlx5_comp0@pci:0000:3b:00.0", irqs[1].Name)

	f := &facts{device: "mlx5_0", irqs: irqs, cpus: []int{2, 3}}
	var got []string
	f.checkIRQs(func(check, problem, fix string) { got = append(got, problem) })
	assert.Empty(t, got, "irq 40 (async) lands on CPU 2, but serves no completion queue; irq 41 lands on CPU 0")
	f.cpus = []int{0}
	f.checkIRQs(func(check, problem, fix string) { got = append(got, problem) })
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "1 of mlx5_0's 1 completion interrupts (irq 41; of 2 MSI vectors of its PCI function) may land on measuring CPU 0")
}

// TestNUMASoftDevice: on a host with two nodes, a soft-RoCE device's node
// is its netdev's (env.DeviceNode): measuring CPUs on the other node get
// the numa warning and rdma-numa-node names the node; on a one-node host
// the line stays "none" as before.
func TestNUMASoftDevice(t *testing.T) {
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s + "\n")} }
	sys := fstest.MapFS{
		"sys/devices/system/node/online":                      f("0-1"),
		"sys/devices/system/node/node0/cpulist":               f("2-3"),
		"sys/devices/system/node/node1/cpulist":               f("0-1"),
		"sys/devices/system/cpu/cpu2/node0":                   &fstest.MapFile{Mode: fs.ModeDir},
		"sys/devices/system/cpu/cpu3/node0":                   &fstest.MapFile{Mode: fs.ModeDir},
		"sys/class/infiniband/rxe2/ports/1/gid_attrs/ndevs/0": f("eth0"),
		"sys/class/net/eth0/device/numa_node":                 f("1"),
	}
	r := Collect(Options{FS: sys, Device: "rxe2", CPUs: []int{2, 3}, Clock: &ClockCost{}})
	var numa *Warning
	for i := range r.Warnings {
		if r.Warnings[i].Check == "numa" {
			numa = &r.Warnings[i]
		}
	}
	require.NotNil(t, numa, "CPUs 2-3 are on node 0, rxe2's netdev on node 1")
	assert.Contains(t, numa.Problem, "rxe2 is on NUMA node 1 but measuring CPUs 2-3 on node 0")
	assert.Contains(t, numa.Fix, "pin to CPUs of node 1 (0-1)")
	assert.Contains(t, lineValues(r), "rdma-numa-node: 1")

	sys["sys/devices/system/node/online"] = f("0")
	r = Collect(Options{FS: sys, Device: "rxe2", CPUs: []int{2, 3}, Clock: &ClockCost{}})
	assert.Contains(t, lineValues(r), "rdma-numa-node: none", "one node: as before")
}

func lineValues(r Report) []string {
	var out []string
	for _, l := range r.Lines {
		out = append(out, l.Key+": "+l.Value)
	}
	return out
}
