package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeState writes a state file by hand, as a forger would.
func writeState(t *testing.T, path string, v any) {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// A forged state naming a file outside the allow-list is refused whole:
// nothing is written, the file stays for inspection.
func TestRestoreRefusesForgedPaths(t *testing.T) {
	root := fakeRoot(t)
	victim := filepath.Join(filepath.Dir(root), "victim", "app.conf")
	require.NoError(t, os.MkdirAll(filepath.Dir(victim), 0o755))
	require.NoError(t, os.WriteFile(victim, []byte("keep\n"), 0o644))
	host, _ := os.Hostname()
	for _, path := range []string{
		"../victim/app.conf",
		"sys/devices/system/cpu/cpu1/../../../../../victim/app.conf",
		"etc/passwd",
		"proc/irq/9/smp_affinity", // not the _list file rdmatune writes
	} {
		state := filepath.Join(t.TempDir(), "state.json")
		writeState(t, state, map[string]any{"root": root, "host": host, "changes": []map[string]string{
			{"what": "CPU 1 governor", "path": gov, "old": "powersave", "new": "performance"},
			{"what": "x", "path": path, "old": "0-1", "new": "0"},
		}})
		var log bytes.Buffer
		assert.Equal(t, 1, run([]string{"-root", root, "-state", state, "restore"}, &log, noEnv), path)
		assert.Contains(t, log.String(), "is not rdmatune's state, nothing restored", path)
		b, _ := os.ReadFile(victim)
		assert.Equal(t, "keep\n", string(b), path)
		assert.Equal(t, "powersave", read(t, root, gov), "no change of a refused file is made")
		assert.FileExists(t, state)
	}
	// A value that is not one rdmatune writes is refused too.
	state := filepath.Join(t.TempDir(), "state.json")
	writeState(t, state, map[string]any{"root": root, "host": host, "changes": []map[string]string{
		{"what": "irq", "path": irq9, "old": "0-1\nrm -rf /", "new": "0"}}})
	var log bytes.Buffer
	assert.Equal(t, 1, run([]string{"-root", root, "-state", state, "restore"}, &log, noEnv))
	assert.Contains(t, log.String(), "is not one rdmatune writes there")
}

// A symlink planted at the fake root's file is not followed by restore.
func TestRestoreNoSymlinkFollow(t *testing.T) {
	root := fakeRoot(t)
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	state := filepath.Join(t.TempDir(), "state.json")
	args := []string{"-root", root, "-state", state, "-cpus", "1", "-irqs", "9"}
	var log bytes.Buffer
	require.Equal(t, 0, run(append(args, "apply"), &log, noEnv), log.String())
	p := filepath.Join(root, irq9)
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink(victim, p))
	assert.Equal(t, 1, run(append(args, "restore"), &log, noEnv))
	b, _ := os.ReadFile(victim)
	assert.Equal(t, "keep", string(b))
}

// A state recorded on another host (or boot) needs -force, which says what
// it does.
func TestRestoreOtherHost(t *testing.T) {
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	args := []string{"-root", root, "-state", state, "-cpus", "1", "-irqs", "9"}
	var log bytes.Buffer
	require.Equal(t, 0, run(append(args, "apply"), &log, noEnv), log.String())
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	host, _ := os.Hostname()
	assert.Equal(t, host, s["host"], "apply records the host name")
	s["host"] = "elsewhere"
	writeState(t, state, s)

	log.Reset()
	assert.Equal(t, 1, run(append(args, "restore"), &log, noEnv))
	assert.Contains(t, log.String(), `recorded on host "elsewhere"`)
	assert.Contains(t, log.String(), "pass -force")
	assert.Equal(t, "performance", read(t, root, gov))

	log.Reset()
	require.Equal(t, 0, run(append([]string{"-force"}, append(args, "restore")...), &log, noEnv), log.String())
	assert.Contains(t, log.String(), "-force: restoring although")
	assert.Equal(t, "powersave", read(t, root, gov))
	assert.NoFileExists(t, state)

	// The boot id, where the root has one, is checked the same way.
	bootID := filepath.Join(root, "proc/sys/kernel/random/boot_id")
	require.NoError(t, os.MkdirAll(filepath.Dir(bootID), 0o755))
	require.NoError(t, os.WriteFile(bootID, []byte("11111111-aaaa\n"), 0o644))
	require.Equal(t, 0, run(append(args, "apply"), &log, noEnv), log.String())
	require.NoError(t, os.WriteFile(bootID, []byte("22222222-bbbb\n"), 0o644)) // a reboot
	log.Reset()
	assert.Equal(t, 1, run(append(args, "restore"), &log, noEnv))
	assert.Contains(t, log.String(), `boot "11111111-aaaa"`)
	assert.Equal(t, "performance", read(t, root, gov), "a state from before the reboot is not applied")
}

// A symlink planted at the temporary name beside the state is not followed.
func TestSaveStateIgnoresPlantedSymlink(t *testing.T) {
	root := fakeRoot(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(victim, state+".new"))
	var log bytes.Buffer
	require.Equal(t, 0, run([]string{"-root", root, "-state", state, "-cpus", "1", "apply"}, &log, noEnv), log.String())
	b, _ := os.ReadFile(victim)
	assert.Equal(t, "keep", string(b))
	fi, err := os.Lstat(state)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the state is a plain file")
	require.Equal(t, 0, run([]string{"-root", root, "-state", state, "restore"}, &log, noEnv), log.String())
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"state.json.new"}, names, "only the planted link is left")
}

// Two applies with different -state files on one host: the second refuses
// instead of recording the first one's tuned values as the old ones.
func TestOneTuningPerHost(t *testing.T) {
	root := fakeRoot(t)
	s1, s2 := filepath.Join(t.TempDir(), "a.json"), filepath.Join(t.TempDir(), "b.json")
	var log bytes.Buffer
	require.Equal(t, 0, run([]string{"-root", root, "-state", s1, "-cpus", "1", "-irqs", "9", "apply"}, &log, noEnv), log.String())
	log.Reset()
	assert.Equal(t, 1, run([]string{"-root", root, "-state", s2, "-cpus", "0,1", "-irqs", "9", "apply"}, &log, noEnv))
	assert.Contains(t, log.String(), "already tuned (its state is in "+s1+"): run rdmatune -state "+s1+" restore first")
	assert.NoFileExists(t, s2)
	require.Equal(t, 0, run([]string{"-root", root, "-state", s1, "restore"}, &log, noEnv), log.String())
	assert.Equal(t, "0-1", read(t, root, irq9))
	log.Reset()
	require.Equal(t, 0, run([]string{"-root", root, "-state", s2, "-cpus", "1", "-irqs", "9", "apply"}, &log, noEnv), log.String())
	require.Equal(t, 0, run([]string{"-root", root, "-state", s2, "restore"}, &log, noEnv), log.String())
	assert.Equal(t, "0-1", read(t, root, irq9))
}

// SIGINT and SIGQUIT end a hold like SIGTERM: passed on, then restored.
func TestHoldRestoresAfterSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			root := fakeRoot(t)
			state := filepath.Join(t.TempDir(), "state.json")
			cmd, log, child := startHoldChild(t, "-root", root, "-state", state, "-cpus", "1", "-irqs", "9")
			assert.Equal(t, "performance", read(t, root, gov))
			require.NoError(t, cmd.Process.Signal(sig))
			assert.Equal(t, 128+int(sig), waitExit(t, cmd), log.String())
			assert.Equal(t, "powersave", read(t, root, gov))
			assert.Equal(t, "0-1", read(t, root, irq9))
			assert.NoFileExists(t, state)
			assert.Contains(t, log.String(), sig.String()+": passing it on, then restoring")
			assert.True(t, gone(child, 5*time.Second), "the held command exited")
		})
	}
}

// The held command dies with rdmatune even when rdmatune is killed.
func TestHoldChildDiesWithHolder(t *testing.T) {
	root := fakeRoot(t)
	state := filepath.Join(t.TempDir(), "state.json")
	cmd, _, child := startHoldChild(t, "-root", root, "-state", state, "-cpus", "1")
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	assert.True(t, gone(child, 5*time.Second), "the held command outlived a killed rdmatune")
	// The host stays tuned (rdmatune could not restore); put it back.
	var log bytes.Buffer
	require.Equal(t, 0, run([]string{"-root", root, "-state", state, "restore"}, &log, noEnv), log.String())
}

// gone waits up to d for pid to be gone or a zombie.
func gone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
	}
	return false
}
