package qmp

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPinVCPUs pins a thread of this test to a CPU it may use, the way
// vCPU threads are pinned, and puts its affinity back.
func TestPinVCPUs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &old)
	cpus, _ := ParsePin("auto")
	last := cpus[len(cpus)-1]
	tid := unix.Gettid()
	placed, err := PinVCPUs([]int{tid}, []int{last})
	if err != nil || placed != fmt.Sprintf("0->%d", last) {
		t.Fatalf("pinVCPUs = %q, %v", placed, err)
	}
	var now unix.CPUSet
	unix.SchedGetaffinity(0, &now)
	if now.Count() != 1 || !now.IsSet(last) {
		t.Errorf("affinity after pinning: %d CPUs", now.Count())
	}
	if _, err := PinVCPUs([]int{tid, tid}, cpus); err == nil || !strings.Contains(err.Error(), "single-threaded TCG") {
		t.Errorf("shared thread: %v", err)
	}
}
