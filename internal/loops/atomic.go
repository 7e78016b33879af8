//go:build cgo && linux

package loops

// FETCH_AND_ADD and COMPARE_AND_SWAP (atomic.c): the initiator alone posts
// and completes one atomic per sample, checking each returned old value;
// no responder loop.

/*
#cgo noescape rb_atomic_ping
#cgo nocallback rb_atomic_ping
#include "loops.h"
*/
import "C"

func pingAtomic(l *C.rb_loop, rtt *C.int64_t, n C.int) C.int { return C.rb_atomic_ping(l, rtt, n) }
