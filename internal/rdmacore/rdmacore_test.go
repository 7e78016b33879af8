package rdmacore_test

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestErrno(t *testing.T) {
	for rc, want := range map[int]syscall.Errno{
		12:  syscall.ENOMEM, // libibverbs: a positive errno
		-12: syscall.ENOMEM, // some providers and the module's C wrappers: negative
		-22: syscall.EINVAL,
	} {
		assert.Equal(t, want, rdmacore.Errno(rc), "rc %d", rc)
	}
}

// Pointer reaches verbs' objects only: nil for a nil (or closed) one, a
// panic for anything else, which is a bug in the caller.
func TestPointer(t *testing.T) {
	for _, obj := range []any{(*verbs.Context)(nil), (*verbs.PD)(nil), (*verbs.MR)(nil), (*verbs.CompChannel)(nil),
		(*verbs.CQ)(nil), (*verbs.QP)(nil), (*verbs.AH)(nil), &verbs.QP{}, &verbs.CQ{}} {
		assert.Nil(t, rdmacore.Pointer(obj), "%T", obj)
	}
	assert.PanicsWithValue(t, "rdmacore: int is not a verbs object", func() { rdmacore.Pointer(3) })
	assert.PanicsWithValue(t, "rdmacore: SetPointerFunc called twice", func() {
		rdmacore.SetPointerFunc(func(any) (unsafe.Pointer, bool) { return nil, false })
	})
}
