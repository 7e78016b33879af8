package perftestcmp

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/env"
)

// TestStartPinned starts a child pinned to one CPU and checks its mask,
// and that the starting thread's own mask is unchanged after.
func TestStartPinned(t *testing.T) {
	cpus, err := env.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cpu := cpus[len(cpus)-1]
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
	var out strings.Builder
	cmd.Stdout = &out
	if err := startPinned(cmd, env.PinTo(cpu)); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(strings.TrimPrefix(out.String(), "Cpus_allowed_list:")); got != strconv.Itoa(cpu) {
		t.Errorf("child's CPUs %q, want %d", got, cpu)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != before {
		t.Errorf("process mask changed: %v -> %v (%v)", before, after, err)
	}
	// Unpinned: the child keeps the process's mask.
	out.Reset()
	cmd = exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
	cmd.Stdout = &out
	if err := startPinned(cmd, env.CPU{}); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if before.Count() > 1 && strings.TrimSpace(strings.TrimPrefix(out.String(), "Cpus_allowed_list:")) == strconv.Itoa(cpu) {
		t.Errorf("unpinned child on one CPU: %q", out.String())
	}
	if err := startPinned(exec.Command("true"), env.PinTo(4095)); err == nil || !strings.Contains(err.Error(), "pinning to CPU 4095: invalid argument (name CPUs this process may use; see taskset -p $$) (-cpus chooses the CPUs)") {
		t.Errorf("CPU 4095: %v", err)
	}
}
