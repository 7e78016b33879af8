package rdmalat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// ErrIWARP is the cause when a configuration asks an iWARP device (irdma
// in iWARP mode, cxgb4, siw) for what iWARP does not have.
var ErrIWARP = errors.New("not available on iWARP")

// checkIWARP refuses, matching ErrIWARP and errors.ErrUnsupported, what an
// iWARP device cannot do, before any queue pair is made: iWARP runs RDMA
// over TCP, so it has reliable connections only (no UC, no UD), no
// atomics, and a queue pair reaches RTS only through a TCP connection that
// rdma_cm sets up (moving it by hand is refused: siw says "no socket").
func checkIWARP(dev string, node verbs.NodeType, cfg EndpointConfig) error {
	if node != verbs.NodeRNIC {
		return nil
	}
	var why string
	switch {
	case cfg.Transport != spec.RC:
		why = fmt.Sprintf("iWARP has reliable connections only, no %s: set %s=rc", strings.ToUpper(cfg.Transport.String()), env.VarTransport)
	case cfg.Op.Atomic():
		why = fmt.Sprintf("iWARP has no atomic operations, so %v cannot run there: choose write, read or send", cfg.Op)
	case !cfg.CM:
		why = fmt.Sprintf("its queue pairs connect over TCP, which needs rdma_cm: set %s=1", env.VarCM)
	default:
		return nil
	}
	return fmt.Errorf("rdmalat: %s is an iWARP device: %w: %w (%s)", dev, ErrIWARP, errors.ErrUnsupported, why)
}

// initiatorAccess returns the access the endpoint's buffer is registered
// with: what the peer does to it (remoteAccess), plus, on iWARP, remote
// write for READ's initiator, whose READ responses arrive as writes into
// its buffer (iWARP's RDMA READ response is a tagged write to the sink).
func initiatorAccess(op spec.Op, node verbs.NodeType) verbs.Access {
	a := remoteAccess(op)
	if node == verbs.NodeRNIC && op == spec.Read {
		a |= verbs.AccessRemoteWrite
	}
	return a
}
