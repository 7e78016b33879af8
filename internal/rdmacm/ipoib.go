package rdmacm

import (
	"io/fs"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// arphrdInfiniBand is an IPoIB interface's /sys/class/net/X/type.
const arphrdInfiniBand = 32

// ipoibNetdevs returns the IPoIB interfaces of an InfiniBand device's port:
// the network interfaces of the device's PCI function
// (sys/class/infiniband/DEV/device/net) whose type is InfiniBand and whose
// dev_port is the port's (IPoIB numbers ports from 0), the parent
// interface (ib0) before P_Key children (ib0.8001).
func ipoibNetdevs(fsys fs.FS, dev string, port uint8) []string {
	dir := "sys/class/infiniband/" + dev + "/device/net"
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	var parents, children []string
	for _, e := range ents {
		read := func(f string) int {
			b, err := fs.ReadFile(fsys, dir+"/"+e.Name()+"/"+f)
			if err != nil {
				return -1
			}
			n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 0, 32)
			if err != nil {
				return -1
			}
			return int(n)
		}
		if read("type") != arphrdInfiniBand || read("dev_port") != int(port)-1 {
			continue
		}
		if strings.Contains(e.Name(), ".") {
			children = append(children, e.Name())
		} else {
			parents = append(parents, e.Name())
		}
	}
	return append(parents, children...)
}

// pickAddr chooses the address to reach an interface at, as the GID choice
// does for RoCE: IPv4 before IPv6, a routable one before a link-local one
// (which would need a zone); ok is false when there is none.
func pickAddr(addrs []netip.Addr) (best netip.Addr, ok bool) {
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
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() || a.IsLoopback() || a.IsMulticast() || a.IsUnspecified() {
			continue
		}
		if !ok || score(a) > score(best) {
			best, ok = a, true
		}
	}
	return best, ok
}

// interfaceAddrs returns an interface's IP addresses (net.Interface.Addrs).
func interfaceAddrs(name string) []netip.Addr {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil
	}
	as, err := ifi.Addrs()
	if err != nil {
		return nil
	}
	return ipAddrs(as)
}

// ipAddrs returns the IP addresses of as (net's interface addresses),
// IPv4-mapped ones unmapped.
func ipAddrs(as []net.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}
