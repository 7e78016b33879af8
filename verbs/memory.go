package verbs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// ODPOps is a set of operations a transport can run on memory registered
// with on-demand paging (enum ibv_odp_transport_cap_bits).
type ODPOps uint32

const (
	ODPSend   ODPOps = 1 << 0
	ODPRecv   ODPOps = 1 << 1
	ODPWrite  ODPOps = 1 << 2
	ODPRead   ODPOps = 1 << 3
	ODPAtomic ODPOps = 1 << 4
)

func (o ODPOps) String() string {
	return flagString(uint32(o), []string{"Send", "Recv", "Write", "Read", "Atomic", "SRQRecv"})
}

// ODPCaps is what a device supports of on-demand paging (struct
// ibv_odp_caps): whether at all, and the operations per transport.
type ODPCaps struct {
	Supported  bool // IBV_ODP_SUPPORT
	RC, UC, UD ODPOps
}

// ODP returns the device's on-demand paging capabilities
// (ibv_query_device_ex's odp_caps, what ibv_devinfo -v prints as
// "ODP capabilities").
func (c *Context) ODP() (ODPCaps, error) {
	p, err := c.ptrOr("ibv_query_device_ex")
	if err != nil {
		return ODPCaps{}, err
	}
	return ibvQueryODP(p)
}

// HugePages describes the host's huge pages of the default size, from
// /proc/meminfo: their size, how many are reserved and how many free.
type HugePages struct {
	Size        int // bytes per page; 0: the kernel has no hugetlbfs
	Total, Free int
}

// ReadHugePages reads /proc/meminfo's Hugepagesize, HugePages_Total and
// HugePages_Free.
func ReadHugePages() (HugePages, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return HugePages{}, err
	}
	return parseMeminfo(b), nil
}

func parseMeminfo(b []byte) HugePages {
	var h HugePages
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		switch k {
		case "Hugepagesize":
			h.Size = n << 10 // kB
		case "HugePages_Total":
			h.Total = n
		case "HugePages_Free":
			h.Free = n
		}
	}
	return h
}

// AllocMRHugePages is AllocMR with the region backed by huge pages of the
// default size (mmap MAP_HUGETLB, as perftest --use_hugepages), its size
// rounded up to a whole number of them. When none are free it fails with
// an error that matches syscall.ENOMEM and says how to reserve some.
func (pd *PD) AllocMRHugePages(size int, access Access) (*MR, error) {
	h, err := ReadHugePages()
	if err != nil {
		return nil, &Error{Op: "mmap MAP_HUGETLB", Err: err, Detail: "reading the huge page size from /proc/meminfo"}
	}
	if h.Size == 0 {
		return nil, &Error{Op: "mmap MAP_HUGETLB", Err: syscall.ENOTSUP, Detail: "the kernel has no huge pages (no Hugepagesize in /proc/meminfo: CONFIG_HUGETLBFS)"}
	}
	if size > 0 {
		size = (size + h.Size - 1) / h.Size * h.Size
	}
	return pd.allocMR(size, access, func(n int) ([]byte, error) {
		mem, err := mmapHuge(n)
		if errors.Is(err, syscall.ENOMEM) {
			return nil, fmt.Errorf("%w: %d huge pages of %d kB needed, %d free (HugePages_Free in /proc/meminfo): reserve more, e.g. sysctl vm.nr_hugepages=%d", err, n/h.Size, h.Size>>10, h.Free, h.Total-h.Free+2*(n/h.Size))
		}
		return mem, err
	})
}

// IsHugePage reports whether the page holding b's first byte is a huge
// page, from this process's /proc/self/smaps (KernelPageSize of the
// mapping): proof that a region is backed as asked.
func IsHugePage(b []byte) (bool, error) {
	if len(b) == 0 {
		return false, errors.New("verbs: IsHugePage of an empty slice")
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return false, err
	}
	return pageIsHuge(smaps, addrOf(b))
}

// pageIsHuge finds the mapping of smaps that holds addr and reads its
// KernelPageSize.
func pageIsHuge(smaps []byte, addr uint64) (bool, error) {
	kb, err := smapsField(smaps, addr, "KernelPageSize:")
	return kb > 4, err
}

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
