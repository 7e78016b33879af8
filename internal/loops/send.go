//go:build cgo && linux

package loops

// The receive-driven ping-pong (send.c): SEND and SEND with immediate over
// RC, UC and UD, and WRITE with immediate over RC and UC. Each side waits
// for a receive completion (polling or events), checks its counter
// (payload's last byte, or the immediate) and, on UD, its source QPN,
// reposts the receive, then sends.

/*
#cgo noescape rb_recv_ping
#cgo nocallback rb_recv_ping
#cgo noescape rb_recv_pong
#cgo nocallback rb_recv_pong
#include "loops.h"
*/
import "C"

func pingRecv(l *C.rb_loop, rtt *C.int64_t, n C.int) C.int { return C.rb_recv_ping(l, rtt, n) }

func pongRecv(l *C.rb_loop, max C.uint64_t, done *C.uint64_t) C.int {
	return C.rb_recv_pong(l, max, done)
}
