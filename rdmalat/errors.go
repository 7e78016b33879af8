package rdmalat

import (
	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/internal/oob"
)

// Errors of the measured loops.
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

// Errors of a two-node session (DialPeer), which errors.Is matches: the
// out-of-band protocol's own, named here because that protocol is internal.
// An error completion on the peer's side matches its verbs.WCStatus and is
// a *verbs.Error whose Op begins "rdmapeer's work completion", as a local
// completion's error is; its message says it happened on the peer.
var (
	// ErrPeerAddr: an address that is not host:port or a bare host.
	ErrPeerAddr = oob.ErrAddr
	// ErrNotPeer: what answered at the address is not an rdmapeer.
	ErrNotPeer = oob.ErrNotPeer
	// ErrPeerVersion: the rdmapeer speaks another protocol version.
	ErrPeerVersion = oob.ErrVersion
	// ErrPeerBusy: the rdmapeer's session slots or registered memory are
	// taken by other sessions.
	ErrPeerBusy = oob.ErrBusy
	// ErrPeerParams: the rdmapeer refused the session's parameters.
	ErrPeerParams = oob.ErrInvalidParams
	// ErrPeerAuth: the rdmapeer refused the token, or wants one and none
	// was given (RemoteConfig.Token).
	ErrPeerAuth = oob.ErrAuth
)
