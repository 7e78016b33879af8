//go:build !linux || !cgo

package rdmacm

// Without cgo, or off Linux, every call into librdmacm fails with
// errUnsupported, so the package builds and its pure-Go parts work.

import (
	"fmt"
	"net/netip"
	"unsafe"

	"github.com/rdmabench/rdmabench/verbs"
)

const haveCgo = false

func rdmaCreateEventChannel() (unsafe.Pointer, int, error)           { return nil, -1, errUnsupported }
func rdmaDestroyEventChannel(unsafe.Pointer)                         {}
func rdmaCreateID(unsafe.Pointer, portSpace) (unsafe.Pointer, error) { return nil, errUnsupported }
func rdmaDestroyID(unsafe.Pointer) error                             { return errUnsupported }
func rdmaBindAddr(unsafe.Pointer, netip.AddrPort) error              { return errUnsupported }
func rdmaListen(unsafe.Pointer, int) error                           { return errUnsupported }
func rdmaResolveAddr(unsafe.Pointer, netip.Addr, netip.AddrPort, int) error {
	return errUnsupported
}
func rdmaResolveRoute(unsafe.Pointer, int) error   { return errUnsupported }
func rdmaGetCMEvent(unsafe.Pointer) (event, error) { return event{}, errUnsupported }
func rdmaAddrs(unsafe.Pointer) (netip.AddrPort, netip.AddrPort) {
	return netip.AddrPort{}, netip.AddrPort{}
}
func idGIDs(unsafe.Pointer) ([16]byte, [16]byte) { return [16]byte{}, [16]byte{} }
func idDevice(unsafe.Pointer) (string, uint8)    { return "", 0 }
func rdmaInitQPAttrModify(unsafe.Pointer, unsafe.Pointer, verbs.QPState, int, uint8, uint32, *verbs.MTU) error {
	return errUnsupported
}
func rdmaConnect(unsafe.Pointer, uint32, []byte, uint8, uint8) error { return errUnsupported }
func rdmaAccept(unsafe.Pointer, uint32, []byte, uint8, uint8) error  { return errUnsupported }
func rdmaReject(unsafe.Pointer, []byte) error                        { return errUnsupported }
func rdmaSetTOS(unsafe.Pointer, uint8) error                         { return errUnsupported }
func rdmaEstablish(unsafe.Pointer) error                             { return errUnsupported }
func rdmaDisconnect(unsafe.Pointer) error                            { return errUnsupported }
func rdmaMigrateID(unsafe.Pointer, unsafe.Pointer) error             { return errUnsupported }
func eventName(t eventType) string                                   { return fmt.Sprintf("RDMA_CM_EVENT(%d)", int32(t)) }
func cConstants() map[string]int64                                   { return nil }
