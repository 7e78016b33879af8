package env

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BindThreadMemory locks the calling goroutine to its OS thread and makes
// that thread prefer node n for the memory it faults in (set_mempolicy
// MPOL_PREFERRED, as numactl --preferred): memory mapped and populated
// meanwhile, such as a memory region's buffer (mmap MAP_POPULATE), lands
// on n while n has free pages, elsewhere rather than failing. Pages are
// placed when first touched, so bind before populating; registered pages
// are pinned and would not move later. The returned function gives the
// thread the default policy back and unlocks it. The zero Node binds
// nothing (it only locks).
func (n Node) BindThreadMemory() (restore func(), err error) {
	runtime.LockOSThread()
	if !n.set {
		return runtime.UnlockOSThread, nil
	}
	var mask [(maxNode + 1) / 64]uint64
	mask[n.id/64] |= 1 << (n.id % 64)
	if err := setMempolicy(unix.MPOL_PREFERRED, &mask[0], len(mask)*64); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("set_mempolicy(MPOL_PREFERRED, node %d): %w (set %s=off to leave memory to the kernel)", n.id, err, VarNUMA)
	}
	return func() {
		if setMempolicy(unix.MPOL_DEFAULT, nil, 0) == nil {
			runtime.UnlockOSThread()
		} // else the thread stays locked and ends with its goroutine
	}, nil
}

// setMempolicy is the one set_mempolicy(2) call. The kernel reads
// maxnode-1 bits of the mask, so one more than its size is passed.
func setMempolicy(mode int, mask *uint64, bits int) error {
	maxnode := uintptr(0)
	if mask != nil {
		maxnode = uintptr(bits + 1)
	}
	_, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(mode), uintptr(unsafe.Pointer(mask)), maxnode)
	if e != 0 {
		return e
	}
	return nil
}

// PageNodes returns the NUMA node of each page of b, which must be
// populated (move_pages(2) with no target nodes only asks), or a negative
// errno for a page it could not tell. A test's check of placement.
func PageNodes(b []byte) ([]int, error) {
	pageSize := unix.Getpagesize()
	if len(b) == 0 {
		return nil, nil
	}
	base := uintptr(unsafe.Pointer(&b[0])) &^ uintptr(pageSize-1)
	end := uintptr(unsafe.Pointer(&b[0])) + uintptr(len(b))
	var pages []uintptr
	for p := base; p < end; p += uintptr(pageSize) {
		pages = append(pages, p)
	}
	status := make([]int32, len(pages))
	_, _, e := unix.Syscall6(unix.SYS_MOVE_PAGES, 0, uintptr(len(pages)), uintptr(unsafe.Pointer(&pages[0])), 0, uintptr(unsafe.Pointer(&status[0])), 0)
	runtime.KeepAlive(b)
	if e != 0 {
		return nil, fmt.Errorf("move_pages: %w", e)
	}
	out := make([]int, len(status))
	for i, s := range status {
		out[i] = int(s)
	}
	return out, nil
}
