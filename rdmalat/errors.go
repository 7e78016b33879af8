package rdmalat

import "github.com/rdmabench/rdmabench/internal/loops"

var (
	// ErrTimeout: a wait on the peer or on a completion lasted longer than
	// the configured timeout.
	ErrTimeout = loops.ErrTimeout
	// ErrOrder: what arrived is not what was sent: a round trip's counter
	// out of order, a wrong immediate, a UD message from another QP, an
	// atomic's old value other than the word's previous one.
	ErrOrder = loops.ErrOrder
	// ErrStopped: the loop was told to stop.
	ErrStopped = loops.ErrStopped
)
