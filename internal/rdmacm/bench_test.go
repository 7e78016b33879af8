package rdmacm

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/verbs"
)

// BenchmarkConnect measures one rdma_cm connection of two fresh RC QPs,
// loopback and across devices: Listen is outside the loop; creating and
// destroying the QPs and the Conns is inside, as every connection pays it.
func BenchmarkConnect(b *testing.B) {
	for _, p := range pairings {
		b.Run(p.name, func(b *testing.B) {
			dev, second := devices(b)
			sctx := open(b, dev)
			cctx := sctx
			if p.cross {
				cctx = open(b, second)
			}
			server, client := newSide(b, sctx, verbs.RC), newSide(b, cctx, verbs.RC)
			l, err := Listen(netip.AddrPortFrom(server.addr, 0), verbs.RC)
			require.NoError(b, err)
			defer l.Close()
			fresh := func(s *side) *verbs.QP {
				qp, err := s.pd.CreateQP(verbs.QPConfig{Type: verbs.RC, SendCQ: s.cq})
				require.NoError(b, err)
				return qp
			}
			for b.Loop() {
				sq, cq := fresh(server), fresh(client)
				ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
				srv, cli, err := Loopback(ctx, l, client.addr, Config{QP: sq}, Config{QP: cq})
				cancel()
				require.NoError(b, err)
				require.NoError(b, cli.Close())
				require.NoError(b, srv.Close())
				require.NoError(b, sq.Close())
				require.NoError(b, cq.Close())
			}
		})
	}
}
