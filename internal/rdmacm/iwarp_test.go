package rdmacm

import (
	"errors"
	"net/netip"
	"strings"
	"syscall"
	"testing"
)

// TestIWARPAddrNone: addresses no RDMA device binds (TEST-NET ones here,
// on no interface; loopback and link-local ones are not tried) give the
// iWARP reason and what to do, on the host and in the VM alike.
func TestIWARPAddrNone(t *testing.T) {
	addrs := []netip.Addr{
		netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("fe80::1"),
		netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1"),
	}
	_, err := iwarpAddr("IP address of siw9 port 1", "siw9", 1, addrs)
	if !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Fatalf("err = %v, want EADDRNOTAVAIL", err)
	}
	want := "siw9 port 1 is iWARP and none of this host's 2 addresses binds to it, which rdma_cm needs: give the network interface siw9 runs on an IP address (rdma link show siw9 names it)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to say %q", err, want)
	}
}
