package rdmacore

import (
	"fmt"
	"unsafe"
)

// pointerOf is set by package verbs (SetPointerFunc) before any verbs
// object exists: verbs is imported by every package that holds one.
var pointerOf func(obj any) (unsafe.Pointer, bool)

// SetPointerFunc is called once, by package verbs's init, with the
// function that returns the C struct behind one of its objects (nil once
// closed) and false for a value of another type.
func SetPointerFunc(f func(obj any) (unsafe.Pointer, bool)) {
	if pointerOf != nil {
		panic("rdmacore: SetPointerFunc called twice")
	}
	pointerOf = f
}

// Pointer returns the C struct behind a verbs object (*verbs.QP: struct
// ibv_qp *, *verbs.CQ, *verbs.CompChannel, *verbs.AH, ...), or nil when
// obj is nil or closed. The pointer is valid until the object's Close:
// keep obj reachable (runtime.KeepAlive) until C is done with it. A value
// of any other type is a programming error and panics.
func Pointer(obj any) unsafe.Pointer {
	if pointerOf == nil {
		panic("rdmacore: package verbs is not linked in")
	}
	p, ok := pointerOf(obj)
	if !ok {
		panic(fmt.Sprintf("rdmacore: %T is not a verbs object", obj))
	}
	return p
}
