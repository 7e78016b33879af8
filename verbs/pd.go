package verbs

import (
	"fmt"
	"syscall"
	"unsafe"
)

// PD is a protection domain (struct ibv_pd).
type PD struct {
	object
	ctx *Context
}

// AllocPD allocates a protection domain. Equivalent to ibv_alloc_pd.
func (c *Context) AllocPD() (*PD, error) {
	const op = "ibv_alloc_pd"
	p, err := c.ptrOr(op)
	if err != nil {
		return nil, err
	}
	if err := addChildren(op, &c.object); err != nil {
		return nil, err
	}
	pp, err := ibvAllocPD(p)
	if err != nil {
		childrenGone(&c.object)
		return nil, err
	}
	pd := &PD{ctx: c}
	track(pd, &pd.object, kindPD, pp, ibvDeallocPD, &c.object)
	return pd, nil
}

// Context returns the device the PD belongs to.
func (pd *PD) Context() *Context { return pd.ctx }

// Close deallocates the PD (ibv_dealloc_pd). It fails with ErrInUse while
// MRs, QPs or AHs made from it are open. Idempotent and nil-safe.
func (pd *PD) Close() error {
	if pd == nil {
		return nil
	}
	return pd.close("ibv_dealloc_pd", "MRs, QPs or AHs")
}

func (pd *PD) ptrOr(op string) (unsafe.Pointer, error) {
	if pd == nil {
		return nil, errClosed(op)
	}
	if p := pd.live(); p != nil {
		return p, nil
	}
	return nil, errClosed(op)
}

// MR is a registered memory region (struct ibv_mr) over memory mapped outside
// the Go heap.
type MR struct {
	object
	pd         *PD
	mem        []byte
	lkey, rkey uint32
}

// AllocMR maps size bytes of zeroed anonymous memory (mmap with
// MAP_POPULATE, never the Go heap) and registers it with the PD
// (ibv_reg_mr). Remote write and remote atomic access imply local write, as
// libibverbs requires; AllocMR adds it.
func (pd *PD) AllocMR(size int, access Access) (*MR, error) {
	return pd.allocMR(size, access, mmapAnon)
}

// allocMR registers size bytes that mmap maps.
func (pd *PD) allocMR(size int, access Access, mmap func(int) ([]byte, error)) (*MR, error) {
	const op = "ibv_reg_mr"
	if size <= 0 {
		return nil, &Error{Op: op, Err: syscall.EINVAL, Detail: fmt.Sprintf("memory region size must be positive, got %d", size)}
	}
	p, err := pd.ptrOr(op)
	if err != nil {
		return nil, err
	}
	if access&(AccessRemoteWrite|AccessRemoteAtomic) != 0 {
		access |= AccessLocalWrite
	}
	mem, err := mmap(size)
	if err != nil {
		return nil, &Error{Op: "mmap", Err: err, Detail: fmt.Sprintf("%d bytes for a memory region", size)}
	}
	if err := addChildren(op, &pd.object); err != nil {
		_ = munmap(mem)
		return nil, err
	}
	mp, lkey, rkey, err := ibvRegMR(p, uintptr(unsafe.Pointer(&mem[0])), size, access)
	if err != nil {
		childrenGone(&pd.object)
		_ = munmap(mem)
		// Read on this thread: capabilities are per thread.
		return nil, explainRegMR(err, size, memlockState())
	}
	mr := &MR{pd: pd, mem: mem, lkey: lkey, rkey: rkey}
	destroy := func(p unsafe.Pointer) error {
		if err := ibvDeregMR(p); err != nil {
			return err
		}
		return munmap(mem)
	}
	track(mr, &mr.object, kindMR, mp, destroy, &pd.object)
	return mr, nil
}

// Bytes returns the region's memory. It is valid until Close; the device may
// read and write it at any time the region's access flags allow.
func (mr *MR) Bytes() []byte { return mr.mem }

// Addr returns the address of the region's first byte, as the device and the
// peer see it (the remote address of RDMA operations).
func (mr *MR) Addr() uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mr.mem)))) }

// Len returns the region's size in bytes.
func (mr *MR) Len() int { return len(mr.mem) }

// LKey returns the local key, for SGEs.
func (mr *MR) LKey() uint32 { return mr.lkey }

// RKey returns the remote key, for the peer's RDMA operations.
func (mr *MR) RKey() uint32 { return mr.rkey }

// SGE returns a scatter/gather entry for length bytes at offset in the
// region.
func (mr *MR) SGE(offset, length int) SGE {
	return SGE{Addr: mr.Addr() + uint64(offset), Len: uint32(length), LKey: mr.lkey}
}

// Close deregisters the region (ibv_dereg_mr) and unmaps its memory; Bytes
// must not be used afterwards. Idempotent and nil-safe.
func (mr *MR) Close() error {
	if mr == nil {
		return nil
	}
	return mr.close("ibv_dereg_mr", "children")
}

// AHAttr describes the destination of UD sends (struct ibv_ah_attr).
type AHAttr struct {
	Port      uint8    // local port; 0 means 1
	DLID      uint16   // InfiniBand only
	DGID      [16]byte // the destination GID; required on RoCE
	SGIDIndex int      // local GID index
	HopLimit  uint8    // 0 means 64
	SL        uint8
	// TrafficClass and FlowLabel go in the GRH, so only with a DGID.
	TrafficClass uint8
	FlowLabel    uint32 // 20 bits
}

// AH is an address handle (struct ibv_ah).
type AH struct {
	object
	pd *PD
}

// CreateAH creates an address handle for UD sends. Equivalent to
// ibv_create_ah. A GRH is used whenever DGID is not zero.
func (pd *PD) CreateAH(a AHAttr) (*AH, error) {
	const op = "ibv_create_ah"
	p, err := pd.ptrOr(op)
	if err != nil {
		return nil, err
	}
	f := ahFields{port: a.Port, dlid: a.DLID, sl: a.SL, dgid: a.DGID, sgidIndex: a.SGIDIndex, hopLimit: a.HopLimit,
		trafficClass: a.TrafficClass, flowLabel: a.FlowLabel}
	f.setDefaults()
	if err := addChildren(op, &pd.object); err != nil {
		return nil, err
	}
	ap, err := ibvCreateAH(p, &f)
	if err != nil {
		childrenGone(&pd.object)
		return nil, err
	}
	ah := &AH{pd: pd}
	track(ah, &ah.object, kindAH, ap, ibvDestroyAH, &pd.object)
	return ah, nil
}

// Close destroys the address handle (ibv_destroy_ah). Idempotent and
// nil-safe.
func (ah *AH) Close() error {
	if ah == nil {
		return nil
	}
	return ah.close("ibv_destroy_ah", "children")
}

// ahFields is an address vector in the form the C layer fills
// struct ibv_ah_attr from.
type ahFields struct {
	port, sl, hopLimit, trafficClass uint8
	dlid                             uint16
	flowLabel                        uint32
	global                           bool
	dgid                             [16]byte
	sgidIndex                        int
}

func (f *ahFields) setDefaults() {
	if f.port == 0 {
		f.port = 1
	}
	if f.dgid != ([16]byte{}) {
		f.global = true
	}
	if f.global && f.hopLimit == 0 {
		f.hopLimit = 64
	}
}
