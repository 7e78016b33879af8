//go:build linux && cgo

package verbs

// The devices (ibv_get_device_list, ibv_open_device), what they report
// (ibv_query_device, ibv_query_port, the GID table) and their protection
// domains.

/*
#include "ibv.h"
*/
import "C"

import (
	"fmt"
	"strconv"
	"syscall"
	"unsafe"
)

// ibvGetDeviceList mirrors ibv_get_device_list + ibv_get_device_name,
// ibv_get_device_guid, then ibv_free_device_list.
func ibvGetDeviceList() ([]DeviceInfo, error) {
	var n C.int
	list, err := C.rb_get_device_list(&n)
	if list == nil {
		return nil, errnoOf("ibv_get_device_list", err)
	}
	defer C.ibv_free_device_list(list)
	out := make([]DeviceInfo, 0, int(n))
	for i := 0; i < int(n); i++ {
		dev := C.rb_device_at(list, C.int(i))
		out = append(out, DeviceInfo{
			Name:     C.GoString(C.ibv_get_device_name(dev)),
			GUID:     GUID(be64(uint64(C.ibv_get_device_guid(dev)))),
			NodeType: NodeType(C.rb_device_node_type(dev)),
		})
	}
	return out, nil
}

// ibvOpenDevice mirrors ibv_get_device_list + ibv_open_device. It returns
// ENODEV when no device has that name.
func ibvOpenDevice(name string) (unsafe.Pointer, NodeType, error) {
	op := "ibv_open_device " + name
	var n C.int
	list, err := C.rb_get_device_list(&n)
	if list == nil {
		return nil, 0, &Error{Op: op, Err: syscall.ENODEV, Detail: "no RDMA devices: ibv_get_device_list: " + errnoOf("", err).(*Error).Err.Error()}
	}
	defer C.ibv_free_device_list(list)
	var names []string
	for i := 0; i < int(n); i++ {
		dev := C.rb_device_at(list, C.int(i))
		devName := C.GoString(C.ibv_get_device_name(dev))
		if devName != name {
			names = append(names, devName)
			continue
		}
		ctx, err := C.ibv_open_device(dev)
		if ctx == nil {
			return nil, 0, errnoOf(op, err)
		}
		return unsafe.Pointer(ctx), NodeType(C.rb_device_node_type(dev)), nil
	}
	detail := "no RDMA devices"
	if len(names) > 0 {
		detail = fmt.Sprintf("devices: %v", names)
	}
	return nil, 0, &Error{Op: op, Err: syscall.ENODEV, Detail: detail}
}

// ibvCloseDevice mirrors ibv_close_device.
func ibvCloseDevice(ctx unsafe.Pointer) error {
	return errRet("ibv_close_device", int(C.ibv_close_device((*C.struct_ibv_context)(ctx))))
}

// ibvQueryODP mirrors ibv_query_device_ex, its odp_caps only; it
// returns an errno value.
func ibvQueryODP(ctx unsafe.Pointer) (ODPCaps, error) {
	var a C.struct_ibv_device_attr_ex
	if rc := C.ibv_query_device_ex((*C.struct_ibv_context)(ctx), nil, &a); rc != 0 {
		return ODPCaps{}, errRet("ibv_query_device_ex", int(rc))
	}
	o := &a.odp_caps
	return ODPCaps{
		Supported: o.general_caps&C.IBV_ODP_SUPPORT != 0,
		RC:        ODPOps(o.per_transport_caps.rc_odp_caps),
		UC:        ODPOps(o.per_transport_caps.uc_odp_caps),
		UD:        ODPOps(o.per_transport_caps.ud_odp_caps),
	}, nil
}

// ibvQueryDevice mirrors ibv_query_device.
func ibvQueryDevice(ctx unsafe.Pointer) (DeviceAttr, error) {
	var a C.struct_ibv_device_attr
	if rc := C.ibv_query_device((*C.struct_ibv_context)(ctx), &a); rc != 0 {
		return DeviceAttr{}, errRet("ibv_query_device", int(rc))
	}
	return DeviceAttr{
		FirmwareVersion: C.GoString(&a.fw_ver[0]),
		NodeGUID:        GUID(be64(uint64(a.node_guid))),
		VendorID:        uint32(a.vendor_id),
		VendorPartID:    uint32(a.vendor_part_id),
		HWVersion:       uint32(a.hw_ver),
		MaxMRSize:       uint64(a.max_mr_size),
		MaxQP:           int(a.max_qp),
		MaxQPWR:         int(a.max_qp_wr),
		MaxSGE:          int(a.max_sge),
		MaxCQ:           int(a.max_cq),
		MaxCQE:          int(a.max_cqe),
		MaxMR:           int(a.max_mr),
		MaxPD:           int(a.max_pd),
		MaxAH:           int(a.max_ah),
		MaxQPRdAtom:     int(a.max_qp_rd_atom),
		MaxQPInitRdAtom: int(a.max_qp_init_rd_atom),
		AtomicCap:       AtomicCap(a.atomic_cap),
		MaxPKeys:        int(a.max_pkeys),
		PhysPortCount:   uint8(a.phys_port_cnt),
	}, nil
}

// probeMaxInline creates throwaway QPs of type typ (ibv_create_qp) asking
// for ever smaller inline sizes and returns the first the device accepts,
// as read back from ibv_qp_init_attr.cap.max_inline_data.
func probeMaxInline(ctx unsafe.Pointer, typ QPType) (int, error) {
	rc := int(C.rb_probe_max_inline((*C.struct_ibv_context)(ctx), C.int(typ)))
	if rc < 0 {
		return 0, errRet("probe max_inline_data", rc)
	}
	return rc, nil
}

// ibvQueryPort mirrors ibv_query_port.
func ibvQueryPort(ctx unsafe.Pointer, port uint8) (PortAttr, error) {
	var a C.struct_ibv_port_attr
	if rc := C.rb_query_port((*C.struct_ibv_context)(ctx), C.uint8_t(port), &a); rc != 0 {
		return PortAttr{}, errRet("ibv_query_port "+strconv.Itoa(int(port)), int(rc))
	}
	return PortAttr{
		State:        PortState(a.state),
		MaxMTU:       MTU(a.max_mtu),
		ActiveMTU:    MTU(a.active_mtu),
		GIDTableLen:  int(a.gid_tbl_len),
		PKeyTableLen: int(a.pkey_tbl_len),
		LID:          uint16(a.lid),
		SMLID:        uint16(a.sm_lid),
		LinkLayer:    LinkLayer(a.link_layer),
		ActiveSpeed:  uint8(a.active_speed),
		ActiveWidth:  uint8(a.active_width),
	}, nil
}

// ibvQueryGIDEx mirrors ibv_query_gid_ex. An empty entry is reported as
// ENODATA by libibverbs and returned as a zero GID with no error.
func ibvQueryGIDEx(ctx unsafe.Pointer, port uint8, index int) (GID, error) {
	var e C.struct_ibv_gid_entry
	rc, err := C.ibv_query_gid_ex((*C.struct_ibv_context)(ctx), C.uint32_t(port), C.uint32_t(index), &e, 0)
	if rc != 0 {
		code := int(rc)
		if code == -1 {
			if en, ok := err.(syscall.Errno); ok {
				code = int(en)
			}
		}
		if code == int(syscall.ENODATA) || code == -int(syscall.ENODATA) {
			return GID{Index: index}, nil
		}
		return GID{}, errRet(fmt.Sprintf("ibv_query_gid_ex port %d index %d", port, index), code)
	}
	g := GID{Index: index, Type: GIDType(e.gid_type), IfIndex: int(e.ndev_ifindex)}
	raw := (*[16]byte)(unsafe.Pointer(&e.gid))
	g.Raw = *raw
	return g, nil
}

// ibvQueryGIDTable mirrors ibv_query_gid_table: every filled entry of every
// port in one call (one ioctl on kernels since 5.10; libibverbs falls back
// to sysfs on older ones). max is the sum of the ports' gid_tbl_len: the
// kernel refuses a buffer too small for the filled entries.
func ibvQueryGIDTable(ctx unsafe.Pointer, max int) ([]GID, []uint8, error) {
	if max <= 0 {
		return nil, nil, nil
	}
	entries := (*C.struct_ibv_gid_entry)(C.calloc(C.size_t(max), C.size_t(unsafe.Sizeof(C.struct_ibv_gid_entry{}))))
	if entries == nil {
		return nil, nil, errno("ibv_query_gid_table", syscall.ENOMEM)
	}
	defer C.free(unsafe.Pointer(entries))
	n := int(C.ibv_query_gid_table((*C.struct_ibv_context)(ctx), entries, C.size_t(max), 0))
	if n < 0 {
		return nil, nil, errRet("ibv_query_gid_table", n)
	}
	all := unsafe.Slice(entries, n)
	gids := make([]GID, n)
	ports := make([]uint8, n)
	for i, e := range all {
		gids[i] = GID{Index: int(e.gid_index), Type: GIDType(e.gid_type), IfIndex: int(e.ndev_ifindex)}
		gids[i].Raw = *(*[16]byte)(unsafe.Pointer(&e.gid))
		ports[i] = uint8(e.port_num)
	}
	return gids, ports, nil
}

// ibvAllocPD mirrors ibv_alloc_pd.
func ibvAllocPD(ctx unsafe.Pointer) (unsafe.Pointer, error) {
	pd, err := C.ibv_alloc_pd((*C.struct_ibv_context)(ctx))
	if pd == nil {
		return nil, errnoOf("ibv_alloc_pd", err)
	}
	return unsafe.Pointer(pd), nil
}

// ibvDeallocPD mirrors ibv_dealloc_pd.
func ibvDeallocPD(pd unsafe.Pointer) error {
	return errRet("ibv_dealloc_pd", int(C.ibv_dealloc_pd((*C.struct_ibv_pd)(pd))))
}
