package verbs

import (
	"unsafe"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
)

// The module's other cgo packages reach the C structs through
// rdmacore.Pointer, never through this package's API.
func init() { rdmacore.SetPointerFunc(cPointer) }

// cPointer returns the C struct behind one of the package's objects (nil
// for a nil or closed one), and false for a value of another type.
func cPointer(obj any) (unsafe.Pointer, bool) {
	switch v := obj.(type) {
	case *Context:
		return livePtr(v), true
	case *PD:
		return livePtr(v), true
	case *MR:
		return livePtr(v), true
	case *CompChannel:
		return livePtr(v), true
	case *CQ:
		return livePtr(v), true
	case *QP:
		return livePtr(v), true
	case *AH:
		return livePtr(v), true
	}
	return nil, false
}

// livePtr is p's C pointer, nil-safe.
func livePtr[T any, P interface {
	*T
	live() unsafe.Pointer
}](p P) unsafe.Pointer {
	if p == nil {
		return nil
	}
	return p.live()
}
