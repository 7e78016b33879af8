//go:build cgo && linux

package loops

// RDMA READ (read.c): the initiator alone posts and completes one READ
// per sample; no responder loop.

/*
#cgo noescape rb_read_ping
#cgo nocallback rb_read_ping
#include "loops.h"
*/
import "C"

func pingRead(l *C.rb_loop, rtt *C.int64_t, n C.int) C.int { return C.rb_read_ping(l, rtt, n) }
