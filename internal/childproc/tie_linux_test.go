package childproc

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTieDiesWithParent: a tied child dies when its parent is killed with
// SIGKILL, which the parent cannot pass on; it stays in its parent's
// process group, where a terminal's ^C reaches both.
func TestTieDiesWithParent(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), helperEnv+"=1")
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err, "the parent's output: %q", line)
	pgid, err := syscall.Getpgid(child)
	require.NoError(t, err)
	parentGroup, err := syscall.Getpgid(parent.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, parentGroup, pgid, "the parent's process group")

	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()
	waitGone(t, child)
}

// TestTieGroupCancelKillsTheGroup: a group of its own, and cancelling the
// context kills what the child started too.
func TestTieGroupCancelKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 60 & echo $!; wait")
	TieGroup(cmd)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, cmd.Process.Pid, pgid, "a process group of its own")
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	cancel()
	err = waitWithin(t, cmd, 10*time.Second)
	require.Error(t, err)
	waitGone(t, grandchild)

	// A command made by exec.Command has no Cancel, and TieGroup gives
	// it none (Start would refuse it).
	cmd = exec.Command("true")
	TieGroup(cmd)
	assert.Nil(t, cmd.Cancel)
	require.NoError(t, cmd.Run())
}

// waitGone fails t unless pid ends within 10 s; a zombie waiting for its
// reaper counts as ended.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived its parent", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s still running after %v", cmd, d)
		return nil
	}
}

// alive reports whether pid runs (a zombie waiting for a reaper does not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return err == nil && !strings.HasPrefix(rest, "Z")
}
