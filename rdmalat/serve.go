package rdmalat

import (
	"context"
	"fmt"

	"github.com/rdmabench/rdmabench/internal/responder"
)

// The server side of a pair, for rdmapeer (internal/peer) and nobody
// else: the answering loop on a local endpoint and the rdma_cm accept,
// reached through internal/responder rather than rdmalat's API.
func init() {
	responder.Register(responder.Hooks[*Endpoint, PeerInfo]{
		New: func(ep *Endpoint, initiator PeerInfo, cfg responder.Config) responder.Loop {
			return newLocalResponder(ep, initiator, cfg)
		},
		ListenCM: func(ep *Endpoint) (responder.Listener, error) {
			l, err := ep.listenCM()
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return l, nil
		},
		AcceptCM: func(ctx context.Context, ep *Endpoint, l responder.Listener, cookie uint64) (PeerInfo, error) {
			cl, ok := l.(*cmListener)
			if !ok {
				return PeerInfo{}, fmt.Errorf("rdmalat: accepting on a %T, not a listener of ListenCM", l)
			}
			return ep.acceptCM(ctx, cl, cookie)
		},
	})
}
