package peer

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// acceptCM is a session's rdma_cm connection (oob.FlagCM): a listener on
// this side's device address, named in the Endpoint sent to the client
// with a random cookie, accepts the client's connection, then closes (one
// connection per session). Requests without the cookie are refused and
// the wait goes on; it is bounded by the session's timeout, at most this
// peer's own whatever the client asked, and by Shutdown. It returns what the client told of
// itself.
func (s *servedSession) acceptCM(ep *rdmalat.Endpoint, timeout time.Duration) (rdmalat.PeerInfo, error) {
	l, err := server().ListenCM(ep)
	if err != nil {
		return rdmalat.PeerInfo{}, s.fail(oob.CodeResource, err)
	}
	defer l.Close()
	wire := s.wire(ep)
	wire.CMAddr = l.Addr().String()
	if wire.CMCookie, err = newCookie(); err != nil {
		return rdmalat.PeerInfo{}, s.fail(oob.CodeInternal, err)
	}
	if err := s.conn.SendEndpoint(wire); err != nil {
		return rdmalat.PeerInfo{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(timeout, s.cfg.Timeout))
	defer cancel()
	if s.cfg.Done != nil {
		go func() {
			select {
			case <-s.cfg.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	client, err := server().AcceptCM(ctx, ep, l, wire.CMCookie)
	if err != nil {
		// rdmacm's error names the address
		return rdmalat.PeerInfo{}, s.fail(oob.CodeResource, fmt.Errorf("accepting the client's rdma_cm connection: %w", err))
	}
	return client, nil
}
