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

// The samples' buffer is faulted in before the loop writes it, even when
// allocated right after FreeOSMemory, as Expect does after startRun's. The
// control, a fresh anonymous mapping, shows that the check sees unbacked
// pages (a plain make there measured 0 of 128 pages resident).
func TestSampleBufferIsResident(t *testing.T) {
	const n = 1 << 16 // 512 KiB, a large allocation of its own
	mem, err := unix.Mmap(-1, 0, n*8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	defer func() { require.NoError(t, unix.Munmap(mem)) }()
	in, _ := resident(t, unsafe.Slice((*int64)(unsafe.Pointer(&mem[0])), n))
	require.Zero(t, in, "pages of an untouched mapping resident")
	debug.FreeOSMemory()
	b := newSampleBuffer(n)
	in, all := resident(t, b)
	require.Equal(t, all, in, "pages of the samples' buffer resident before the loop")
}
