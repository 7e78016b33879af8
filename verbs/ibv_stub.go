//go:build !linux || !cgo

package verbs

// Without cgo, or off Linux, every call into libibverbs fails with
// errUnsupported, so the package builds and its pure-Go parts work.

import (
	"fmt"
	"unsafe"
)

const haveCgo = false

func cLayout() []uintptr           { return nil }
func cConstants() map[string]int64 { return nil }

func ibvGetDeviceList() ([]DeviceInfo, error)                { return nil, errUnsupported }
func ibvOpenDevice(string) (unsafe.Pointer, NodeType, error) { return nil, 0, errUnsupported }
func ibvCloseDevice(unsafe.Pointer) error                    { return errUnsupported }
func ibvQueryDevice(unsafe.Pointer) (DeviceAttr, error)      { return DeviceAttr{}, errUnsupported }
func probeMaxInline(unsafe.Pointer, QPType) (int, error)     { return 0, errUnsupported }
func ibvQueryPort(unsafe.Pointer, uint8) (PortAttr, error) {
	return PortAttr{}, errUnsupported
}
func ibvQueryGIDEx(unsafe.Pointer, uint8, int) (GID, error) { return GID{}, errUnsupported }
func ibvQueryGIDTable(unsafe.Pointer, int) ([]GID, []uint8, error) {
	return nil, nil, errUnsupported
}
func ibvAllocPD(unsafe.Pointer) (unsafe.Pointer, error) { return nil, errUnsupported }
func ibvDeallocPD(unsafe.Pointer) error                 { return errUnsupported }
func ibvRegMR(unsafe.Pointer, uintptr, int, Access) (unsafe.Pointer, uint32, uint32, error) {
	return nil, 0, 0, errUnsupported
}
func ibvDeregMR(unsafe.Pointer) error { return errUnsupported }
func ibvCreateCompChannel(unsafe.Pointer) (unsafe.Pointer, int, error) {
	return nil, -1, errUnsupported
}
func ibvDestroyCompChannel(unsafe.Pointer) error           { return errUnsupported }
func ibvGetCQEvent(unsafe.Pointer) (unsafe.Pointer, error) { return nil, errUnsupported }
func ibvAckCQEvents(unsafe.Pointer, int)                   {}
func ibvCreateCQ(unsafe.Pointer, int, unsafe.Pointer) (unsafe.Pointer, error) {
	return nil, errUnsupported
}
func ibvDestroyCQ(unsafe.Pointer) error                       { return errUnsupported }
func ibvReqNotifyCQ(unsafe.Pointer, bool) error               { return errUnsupported }
func ibvPollCQ(unsafe.Pointer, []WorkCompletion) int          { return -1 }
func ibvPostSend(unsafe.Pointer, *SendWR, unsafe.Pointer) int { return -38 }
func ibvPostRecv(unsafe.Pointer, uint64, SGE) int             { return -38 }
func ibvCreateQP(unsafe.Pointer, *qpCreate) (unsafe.Pointer, uint32, qpCaps, error) {
	return nil, 0, qpCaps{}, errUnsupported
}
func ibvQueryQPState(unsafe.Pointer) (QPState, error)               { return 0, errUnsupported }
func ibvDestroyQP(unsafe.Pointer) error                             { return errUnsupported }
func ibvModifyQP(unsafe.Pointer, *qpModify) error                   { return errUnsupported }
func ibvCreateAH(unsafe.Pointer, *ahFields) (unsafe.Pointer, error) { return nil, errUnsupported }
func ibvQueryQP(unsafe.Pointer) (QPAttr, error)                     { return QPAttr{}, errUnsupported }
func qpAttrRoundTrip(*qpModify) QPAttr                              { return QPAttr{} }
func ahAttrRoundTrip(*ahFields) QPAttr                              { return QPAttr{} }
func ibvDestroyAH(unsafe.Pointer) error                             { return errUnsupported }

func wcStatusStr(s WCStatus) string { return fmt.Sprintf("work completion status %d", uint32(s)) }

func memlockState() memlock { return memlock{} }

func mmapAnon(int) ([]byte, error)                { return nil, errUnsupported }
func mmapHuge(int) ([]byte, error)                { return nil, errUnsupported }
func mmapTHP(int, int) ([]byte, error)            { return nil, errUnsupported }
func ibvQueryODP(unsafe.Pointer) (ODPCaps, error) { return ODPCaps{}, errUnsupported }
func munmap([]byte) error                         { return errUnsupported }
func setNonblock(int) error                       { return errUnsupported }
