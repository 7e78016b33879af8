//go:build cgo && linux

package loops

// RDMA WRITE ping-pong over RC and UC (write.c): each side busy-polls the
// last byte of its buffer for the peer's counter. Never with events.

/*
#cgo noescape rb_write_ping
#cgo nocallback rb_write_ping
#cgo noescape rb_write_pong
#cgo nocallback rb_write_pong
#include "loops.h"
*/
import "C"

func pingWrite(l *C.rb_loop, rtt *C.int64_t, n C.int) C.int { return C.rb_write_ping(l, rtt, n) }

func pongWrite(l *C.rb_loop, max C.uint64_t, done *C.uint64_t) C.int {
	return C.rb_write_pong(l, max, done)
}
