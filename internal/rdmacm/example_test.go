package rdmacm_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmabench/rdmabench/internal/rdmacm"
	"github.com/rdmabench/rdmabench/verbs"
)

// Two-node mode: the peer listens on its device's address, tells the
// client the address and port over its control connection, and accepts;
// the client dials. qp and mr are the side's own, made with package verbs.
func Example_twoNode() {
	var vctx *verbs.Context // verbs.Open(device)
	var qp *verbs.QP        // pd.CreateQP(...), in RESET or INIT
	var mr *verbs.MR        // pd.AllocMR(...)
	local := rdmacm.PeerInfo{Addr: mr.Addr(), Size: uint64(mr.Len()), RKey: mr.RKey()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Peer (rdmapeer):
	addr, _ := rdmacm.DeviceAddr(vctx, 1)
	l, _ := rdmacm.Listen(netip.AddrPortFrom(addr, 0), verbs.RC)
	defer l.Close()
	// ... send l.Addr() to the client over the TCP control connection ...
	conn, err := l.Accept(ctx, rdmacm.Config{QP: qp, Local: local})
	if err != nil {
		return
	}
	defer conn.Close() // before the QP's PD
	fmt.Println(conn.Remote().Addr, conn.Remote().RKey)

	// Client: with peerAddr from the control connection,
	//	conn, err := rdmacm.Dial(ctx, netip.Addr{}, peerAddr, rdmacm.Config{QP: qp, Local: local})
}
