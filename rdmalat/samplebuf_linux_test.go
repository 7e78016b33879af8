package rdmalat

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// resident counts the pages of b that are backed by memory (mincore).
func resident(t *testing.T, b []int64) (in, all int) {
	t.Helper()
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0])) &^ (page - 1)
	end := uintptr(unsafe.Pointer(&b[len(b)-1])) + 8
	vec := make([]byte, (end-start+page-1)/page)
	// x/sys/unix has no wrapper for mincore(2); b stays live to the end.
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	runtime.KeepAlive(b)
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// The samples' buffer is faulted in before the loop writes it: allocated
// right after FreeOSMemory, as Expect does after startRun's, a plain make
// leaves its pages unbacked (the control, which shows the check can fail).
func TestSampleBufferIsResident(t *testing.T) {
	const n = 1 << 16 // 512 KiB, a large allocation of its own
	debug.FreeOSMemory()
	plain := make([]int64, n)
	in, all := resident(t, plain)
	if in == all {
		t.Skipf("the control is already resident (%d of %d pages): this kernel or runtime backs fresh heap memory, so the check below would prove nothing", in, all)
	}
	debug.FreeOSMemory()
	b := newSampleBuffer(n)
	in, all = resident(t, b)
	require.Equal(t, all, in, "pages of the samples' buffer resident before the loop")
	_ = plain[0]
}
