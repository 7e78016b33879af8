//go:build linux

package rdmalat_test

import (
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// busyThread is a thread of this process spinning on one CPU until stop.
type busyThread struct {
	stop atomic.Bool
	done chan struct{} // closed when the thread has ended
}

// spinOn starts a busy thread pinned to cpu; it runs until the returned
// thread's end is called or the test ends.
func spinOn(t *testing.T, cpu int) *busyThread {
	t.Helper()
	b := &busyThread{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		defer close(b.done)
		// Locked and never unlocked: the runtime ends the thread with the
		// goroutine, so its pinned affinity goes with it (an unlocked one
		// would return to the pool pinned, and a later test's thread would
		// find itself allowed one CPU).
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			started <- err
			return
		}
		started <- nil
		for !b.stop.Load() {
		}
	}()
	if err := <-started; err != nil {
		<-b.done
		t.Fatalf("pinning a busy thread to CPU %d: %v", cpu, err)
	}
	t.Cleanup(b.end)
	return b
}

// end stops the thread and waits for it; a second call does nothing.
func (b *busyThread) end() {
	if b.stop.Swap(true) {
		return
	}
	<-b.done
}
