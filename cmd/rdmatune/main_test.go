package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

// The test binary doubles as rdmatune (RDMATUNE_TEST_MAIN=1) and, as
// "child READY", as the command rdmatune holds: it creates READY and
// sleeps until a signal ends it; "child exit N" exits N at once.
func TestMain(m *testing.M) {
	if os.Getenv("RDMATUNE_TEST_MAIN") == "1" {
		if len(os.Args) > 2 && os.Args[1] == "child" {
			if os.Args[2] == "exit" {
				n, _ := strconv.Atoi(os.Args[3])
				os.Exit(n)
			}
			// Like a shell command, it ends with 128+N on signal N (a Go
			// program would dump its stacks and exit 2 on SIGQUIT).
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
			os.WriteFile(os.Args[2], []byte(strconv.Itoa(os.Getpid())), 0o644)
			select {
			case s := <-sigs:
				os.Exit(128 + int(s.(syscall.Signal)))
			case <-time.After(time.Minute):
				os.Exit(0)
			}
		}
		main()
	}
	goleak.VerifyTestMain(m) // fails the run when a test leaves a goroutine behind
}

func noEnv(string) string { return "" }

// fakeRoot: CPU 1 with powersave and C6, irq 9 on CPUs 0-1, PM QoS file.
func fakeRoot(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"sys/devices/system/cpu/online":                        "0-1",
		"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave",
		"sys/devices/system/cpu/cpu1/cpuidle/state0/name":      "POLL",
		"sys/devices/system/cpu/cpu1/cpuidle/state0/latency":   "0",
		"sys/devices/system/cpu/cpu1/cpuidle/state0/disable":   "0",
		"sys/devices/system/cpu/cpu1/cpuidle/state1/name":      "C6",
		"sys/devices/system/cpu/cpu1/cpuidle/state1/latency":   "133",
		"sys/devices/system/cpu/cpu1/cpuidle/state1/disable":   "0",
		"proc/irq/9/smp_affinity_list":                         "0-1",
		"dev/cpu_dma_latency":                                  "",
	}
	for name, v := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(v), 0o644))
	}
	return root
}

func read(t *testing.T, root, name string) string {
	b, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

const (
	gov  = "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"
	c6   = "sys/devices/system/cpu/cpu1/cpuidle/state1/disable"
	irq9 = "proc/irq/9/smp_affinity_list"
)

func TestApplyRestore(t *testing.T) {
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	args := []string{"-root", root, "-state", state, "-cpus", "1", "-irqs", "9"}
	var log bytes.Buffer
	require.Equal(t, 0, run(append(args, "plan"), &log, noEnv), log.String())
	assert.Contains(t, log.String(), "would change CPU 1 governor: powersave -> performance")
	assert.NoFileExists(t, state, "plan changes nothing")
	assert.Equal(t, "powersave", read(t, root, gov))

	log.Reset()
	require.Equal(t, 0, run(append(args, "apply"), &log, noEnv), log.String())
	assert.Contains(t, log.String(), "changed irq 9 affinity: 0-1 -> 0")
	assert.Equal(t, "performance", read(t, root, gov))
	assert.Equal(t, "1", read(t, root, c6))
	assert.Equal(t, "0", read(t, root, irq9))
	assert.FileExists(t, state)

	log.Reset()
	assert.Equal(t, 1, run(append(args, "apply"), &log, noEnv))
	assert.Contains(t, log.String(), "already tuned")

	log.Reset()
	assert.Equal(t, 1, run([]string{"-state", state, "restore"}, &log, noEnv), "restore without the recorded -root")
	assert.Contains(t, log.String(), "was recorded for -root "+root+", not /: run rdmatune -root "+root)
	assert.Equal(t, "performance", read(t, root, gov))

	log.Reset()
	require.Equal(t, 0, run([]string{"-root", root, "-state", state, "restore"}, &log, noEnv), log.String())
	assert.Equal(t, "powersave", read(t, root, gov))
	assert.Equal(t, "0", read(t, root, c6))
	assert.Equal(t, "0-1", read(t, root, irq9))
	assert.NoFileExists(t, state)
}

func TestBadInput(t *testing.T) {
	root := fakeRoot(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-root", root, "frob"}, `unknown command "frob"`},
		{[]string{"-root", root, "-irqs", "x", "plan"}, `-irqs="x": "x" is not an interrupt number`},
		{[]string{"-root", root, "-cpus", "1", "hold"}, "hold needs a command"},
		{[]string{"-state", filepath.Join(root, "none.json"), "restore"}, "nothing to restore"},
	} {
		var log bytes.Buffer
		assert.NotEqual(t, 0, run(tc.args, &log, noEnv), tc.args)
		assert.Contains(t, log.String(), tc.want)
	}
}

// startHold runs the test binary as "rdmatune ARGS hold -- child READY"
// and waits until the child runs.
func startHold(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd, log, _ := startHoldChild(t, args...)
	return cmd, log
}

// startHoldChild is startHold, also returning the held command's pid.
func startHoldChild(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, int) {
	ready := filepath.Join(t.TempDir(), "ready")
	args = append(args, "hold", "--", os.Args[0], "child", ready)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = helperEnv()
	var log bytes.Buffer
	cmd.Stderr = &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(string(b))
			require.NoError(t, err)
			return cmd, &log, pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held command did not start in 20 s; rdmatune said:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// helperEnv is the environment of the test binary run as rdmatune: this
// one's, without the RDMABENCH_ variables that name a device or CPUs (the
// VM sets RDMABENCH_DEVICE=rxe0, which a fake root lacks); tests pass
// -device and -cpus instead.
func helperEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RDMABENCH_DEVICE=") && !strings.HasPrefix(kv, "RDMABENCH_CPUS=") {
			env = append(env, kv)
		}
	}
	return append(env, "RDMATUNE_TEST_MAIN=1")
}

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitCode(err)
	case <-time.After(20 * time.Second):
		t.Fatal("rdmatune did not exit within 20 s of SIGTERM")
		return -1
	}
}

// SIGTERM to rdmatune hold: passed on to the command, then every setting
// and the PM QoS hold are put back, and the state file is gone.
func TestHoldRestoresAfterSIGTERM(t *testing.T) {
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	cmd, log := startHold(t, "-root", root, "-state", state, "-cpus", "1", "-irqs", "9")
	assert.Equal(t, "performance", read(t, root, gov))
	assert.Equal(t, "1", read(t, root, c6))
	assert.Equal(t, "0", read(t, root, irq9))
	qos, err := os.ReadFile(filepath.Join(root, "dev/cpu_dma_latency"))
	require.NoError(t, err)
	assert.Equal(t, binary.NativeEndian.AppendUint32(nil, 0), qos, "PM QoS held at 0")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 128+int(syscall.SIGTERM), waitExit(t, cmd), log.String())
	assert.Equal(t, "powersave", read(t, root, gov))
	assert.Equal(t, "0", read(t, root, c6))
	assert.Equal(t, "0-1", read(t, root, irq9))
	assert.NoFileExists(t, state)
	assert.Contains(t, log.String(), "terminated: passing it on, then restoring")
}

func TestHoldPassesExitStatus(t *testing.T) {
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	cmd := exec.Command(os.Args[0], "-root", root, "-state", state, "-cpus", "1", "hold", "--", os.Args[0], "child", "exit", "7")
	cmd.Env = helperEnv()
	out, err := cmd.CombinedOutput()
	assert.Equal(t, 7, exitCode(err), string(out))
	assert.Equal(t, "powersave", read(t, root, gov))
	assert.NoFileExists(t, state)
}

// In the VM, for real: the console's interrupt moves off CPU 3 and PM QoS
// reads 0 while the command runs; SIGTERM puts both back.
func TestHoldRealInVM(t *testing.T) {
	if os.Getenv("RDMABENCH_VM") != "1" {
		t.Skip("skipping: changes the host's real settings; runs inside the VM (go test -exec bin/rxevm)")
	}
	irq := ""
	b, err := os.ReadFile("/proc/interrupts")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[len(f)-1] == "ttyS0" {
			irq = strings.TrimSuffix(f[0], ":")
		}
	}
	require.NotEmpty(t, irq, "ttyS0 in /proc/interrupts")
	aff := "proc/irq/" + irq + "/smp_affinity_list"
	before := read(t, "/", aff)
	require.Equal(t, "0-3", before)
	qosBefore, ok := hostinfo.PMQoSLimit(hostinfo.Root)
	require.True(t, ok)
	state := filepath.Join(t.TempDir(), "state.json")
	cmd, log := startHold(t, "-state", state, "-device", "rxe0", "-cpus", "3", "-irqs", irq)
	assert.Equal(t, "0-2", read(t, "/", aff))
	held, _ := hostinfo.PMQoSLimit(hostinfo.Root)
	assert.Equal(t, 0, held)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 128+int(syscall.SIGTERM), waitExit(t, cmd), log.String())
	t.Logf("rdmatune said:\n%s", log.String())
	assert.Equal(t, before, read(t, "/", aff))
	after, _ := hostinfo.PMQoSLimit(hostinfo.Root)
	assert.Equal(t, qosBefore, after)
	assert.NoFileExists(t, state)
}
