package rdmacm

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"syscall"

	"github.com/rdmabench/rdmabench/verbs"
)

// iWARP (irdma in iWARP mode, cxgb4, siw) runs RDMA over TCP, and
// rdma_cm's flow differs from InfiniBand's and RoCE's in two places:
//   - Its GIDs are MAC addresses, not IP addresses, and a soft device
//     (siw) names no network interface in sysfs, so the address to bind
//     to is found by asking rdma_cm which device each of the host's
//     addresses binds to (iwarpAddr).
//   - The connection is a TCP connection with an MPA exchange, which the
//     kernel's iWARP CM completes on its own: the active side gets
//     RDMA_CM_EVENT_ESTABLISHED (carrying the peer's private data) where
//     InfiniBand delivers CONNECT_RESPONSE, and the QP is moved to RTS by
//     the kernel (moving it by hand is refused: siw's "no socket"). Dial
//     leaves the QP in INIT and takes the ESTABLISHED event as the
//     answer; librdmacm does the same for a QP it created.

// iwarpAddr returns an IP address of this host that rdma_cm binds to dev's
// port: IPv4 before IPv6, routable before link-local, as pickAddr ranks
// them. Each candidate costs an rdma_cm ID and a bind (no traffic).
func iwarpAddr(op, dev string, port uint8, addrs []netip.Addr) (netip.Addr, error) {
	score := func(a netip.Addr) int {
		s := 0
		if a.Is4() {
			s += 2
		}
		if !a.IsLinkLocalUnicast() {
			s++
		}
		return s
	}
	var cands []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if a.IsValid() && !a.IsLoopback() && !a.IsMulticast() && !a.IsUnspecified() && !a.IsLinkLocalUnicast() {
			cands = append(cands, a)
		}
	}
	slices.SortStableFunc(cands, func(a, b netip.Addr) int { return cmp.Compare(score(b), score(a)) })
	for _, a := range cands {
		if bindsTo(a, dev, port) {
			return a, nil
		}
	}
	return netip.Addr{}, &Error{Op: op, Err: syscall.EADDRNOTAVAIL,
		Detail: fmt.Sprintf("%s port %d is iWARP and none of this host's %d addresses binds to it, which rdma_cm needs: give the network interface %s runs on an IP address (rdma link show %s names it)", dev, port, len(cands), dev, dev)}
}

// bindsTo reports whether rdma_bind_addr to a picks dev's port.
func bindsTo(a netip.Addr, dev string, port uint8) bool {
	cm, err := newCMID(psTCP)
	if err != nil {
		return false
	}
	defer cm.destroy()
	if rdmaBindAddr(cm.id, netip.AddrPortFrom(a, 0)) != nil {
		return false
	}
	name, p := idDevice(cm.id)
	return name == dev && p == port
}

// hostAddrs returns every IP address of this host's interfaces.
func hostAddrs() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	return ipAddrs(as)
}

// isIWARP reports whether qp's device is an iWARP one.
func isIWARP(qp *verbs.QP) bool {
	return qp.PD().Context().NodeType() == verbs.NodeRNIC
}
