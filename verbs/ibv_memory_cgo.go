//go:build linux && cgo

package verbs

// Memory: registration (ibv_reg_mr), the locked-memory limit, and the
// mappings outside the Go heap that registered memory lives in.

/*
#include "ibv.h"
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ibvRegMR mirrors ibv_reg_mr. addr must not point into the Go heap.
func ibvRegMR(pd unsafe.Pointer, addr uintptr, length int, access Access) (mr unsafe.Pointer, lkey, rkey uint32, err error) {
	p, cerr := C.rb_reg_mr((*C.struct_ibv_pd)(pd), C.uint64_t(addr), C.size_t(length), C.int(access))
	if p == nil {
		return nil, 0, 0, errnoOf("ibv_reg_mr", cerr)
	}
	return unsafe.Pointer(p), uint32(p.lkey), uint32(p.rkey), nil
}

// ibvDeregMR mirrors ibv_dereg_mr.
func ibvDeregMR(mr unsafe.Pointer) error {
	return errRet("ibv_dereg_mr", int(C.ibv_dereg_mr((*C.struct_ibv_mr)(mr))))
}

// memlockState reads RLIMIT_MEMLOCK (getrlimit) and whether the calling
// thread has CAP_IPC_LOCK (capget), which lifts the limit.
func memlockState() memlock {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		return memlock{}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return memlock{}
	}
	return memlock{known: true, cur: rl.Cur, max: rl.Max, ipcLock: data[0].Effective&(1<<unix.CAP_IPC_LOCK) != 0}
}

// mmapAnon maps size bytes of zeroed, populated anonymous memory.
func mmapAnon(size int) ([]byte, error) {
	return mmapPrivate(size, unix.MAP_POPULATE)
}

// mmapPrivate maps size bytes of zeroed anonymous memory with the extra
// flags. Every mapping here goes through MmapPtr and munmap's MunmapPtr,
// not unix.Mmap's bookkeeping, so that mmapTHP may trim a mapping.
func mmapPrivate(size, flags int) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|flags)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), size), nil
}

// mmapTHP maps size bytes (a multiple of align, the PMD huge page size)
// at an align boundary, asks for transparent huge pages there
// (madvise MADV_HUGEPAGE) and only then touches every page, so that each
// fault can take a whole huge page.
func mmapTHP(size, align int) ([]byte, error) {
	raw, err := mmapPrivate(size+align, 0)
	if err != nil {
		return nil, err
	}
	base := uintptr(unsafe.Pointer(&raw[0]))
	off := int((uintptr(align) - base%uintptr(align)) % uintptr(align))
	if off > 0 {
		_ = munmap(raw[:off])
	}
	if tail := raw[off+size:]; len(tail) > 0 {
		_ = munmap(tail)
	}
	mem := raw[off : off+size : off+size]
	if err := unix.Madvise(mem, unix.MADV_HUGEPAGE); err != nil {
		_ = munmap(mem)
		return nil, fmt.Errorf("madvise MADV_HUGEPAGE: %w", err)
	}
	for i := 0; i < size; i += os.Getpagesize() {
		mem[i] = 0
	}
	return mem, nil
}

// mmapHuge maps size bytes (a multiple of the huge page size) of zeroed,
// populated anonymous memory in huge pages of the default size.
func mmapHuge(size int) ([]byte, error) {
	return mmapPrivate(size, unix.MAP_POPULATE|unix.MAP_HUGETLB)
}

func munmap(b []byte) error {
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
}
