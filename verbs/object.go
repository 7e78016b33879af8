package verbs

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// kind names a class of libibverbs object for the open-object counters.
type kind int

const (
	kindContext kind = iota
	kindPD
	kindMR
	kindCompChannel
	kindCQ
	kindQP
	kindAH
	numKinds
)

var kindNames = [numKinds]string{"context", "pd", "mr", "compchannel", "cq", "qp", "ah"}

var openCount [numKinds]atomic.Int64

// OpenObjects returns how many objects of each kind ("context", "pd", "mr",
// "compchannel", "cq", "qp", "ah") are open in the process, for leak checks.
func OpenObjects() map[string]int {
	m := make(map[string]int, numKinds)
	for k := range numKinds {
		m[kindNames[k]] = int(openCount[k].Load())
	}
	return m
}

// object is the part every wrapper of a C object shares: the C pointer, the
// count of open children, and what destroys it.
type object struct {
	mu       sync.Mutex
	ptr      unsafe.Pointer
	children int
	rel      release
	cleanup  runtime.Cleanup
}

// release is what destroys a C object without its Go wrapper: the argument of
// the runtime cleanup, so it must not refer to the wrapper.
type release struct {
	kind    kind
	ptr     unsafe.Pointer
	destroy func(unsafe.Pointer) error
	parents []*object
}

func (r release) run() {
	_ = r.destroy(r.ptr)
	for _, p := range r.parents {
		p.childGone()
	}
	openCount[r.kind].Add(-1)
}

// track makes o the live wrapper of ptr, whose parents have already counted
// it as a child (see addChild), and registers the safety-net cleanup on
// owner.
func track[T any](owner *T, o *object, k kind, ptr unsafe.Pointer, destroy func(unsafe.Pointer) error, parents ...*object) {
	o.ptr = ptr
	o.rel = release{kind: k, ptr: ptr, destroy: destroy, parents: parents}
	openCount[k].Add(1)
	o.cleanup = runtime.AddCleanup(owner, release.run, o.rel)
}

// addChild counts one more child of o, or fails if o is closed.
func (o *object) addChild(op string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ptr == nil {
		return errClosed(op)
	}
	o.children++
	return nil
}

func (o *object) childGone() {
	o.mu.Lock()
	o.children--
	o.mu.Unlock()
}

// addChildren counts a child in each of parents, undoing on failure.
func addChildren(op string, parents ...*object) error {
	for i, p := range parents {
		if err := p.addChild(op); err != nil {
			for _, q := range parents[:i] {
				q.childGone()
			}
			return err
		}
	}
	return nil
}

func childrenGone(parents ...*object) {
	for _, p := range parents {
		p.childGone()
	}
}

// close destroys the C object unless it has open children. It is idempotent.
func (o *object) close(op, children string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ptr == nil {
		return nil
	}
	if o.children > 0 {
		return &Error{Op: op, Err: ErrInUse, Detail: fmt.Sprintf("%d %s still open; close them first", o.children, children)}
	}
	if err := o.rel.destroy(o.ptr); err != nil {
		return err
	}
	o.cleanup.Stop()
	o.ptr = nil
	for _, p := range o.rel.parents {
		p.childGone()
	}
	openCount[o.rel.kind].Add(-1)
	return nil
}

// live returns the C pointer, or nil once closed.
func (o *object) live() unsafe.Pointer {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ptr
}

// be64 converts a big-endian (__be64) value read as a native integer.
func be64(v uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}
