package peer

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
)

// Defaults of the admission limits.
const (
	// DefaultMaxPerClient bounds the sessions of one client address (one
	// /64 for IPv6).
	DefaultMaxPerClient = 2
	// DefaultMaxPendingPerClient bounds one address's connections in
	// their handshake (one /64's for IPv6), so that one host's silent
	// connections cannot take all MaxHandshakes.
	DefaultMaxPendingPerClient = 16
)

// ParseAllow parses a comma-separated list of CIDR prefixes or bare
// addresses (rdmapeer -allow), e.g. "10.0.0.0/24,192.168.77.2". A list
// with no prefix ("", " ", ",") is an error, never "any address": that is
// what leaving -allow out means. An IPv4-mapped address or prefix
// (::ffff:10.0.0.0/104) is taken as the IPv4 one it names (10.0.0.0/8),
// since client addresses are compared unmapped; an IPv6 zone (fe80::1%eth0)
// is refused, since client addresses are compared without theirs.
func ParseAllow(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := parseAllowed(f)
		if err != nil {
			return nil, fmt.Errorf("-allow %q: %v", v, err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-allow %q: no prefix; leave -allow out to serve any address (example: -allow 10.0.0.0/24)", v)
	}
	return out, nil
}

// parseAllowed parses one entry of -allow.
func parseAllowed(f string) (netip.Prefix, error) {
	if i := strings.IndexByte(f, '%'); i >= 0 {
		without := f[:i]
		if j := strings.IndexByte(f[i:], '/'); j >= 0 {
			without += f[i+j:]
		}
		return netip.Prefix{}, fmt.Errorf("%q names an IPv6 zone (%s), which client addresses are compared without; write %s", f, f[i:], without)
	}
	p, err := netip.ParsePrefix(f)
	if err != nil {
		a, aerr := netip.ParseAddr(f)
		if aerr != nil {
			return netip.Prefix{}, fmt.Errorf("%q is neither an address nor a CIDR prefix (example: -allow 10.0.0.0/24,192.168.77.2)", f)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("%q reaches beyond the IPv4-mapped addresses (::ffff:0:0/96), which clients are compared without; write IPv4 and IPv6 prefixes apart", f)
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// remoteIP is the address a connection comes from, IPv4-mapped ones
// unmapped and without an IPv6 zone (-allow has none); the zero Addr when
// it is not an IP connection.
func remoteIP(nc net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(nc.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	return netip.Addr{}
}

// allowed says whether ip may connect: always, with no Allow list.
func (s *Server) allowed(ip netip.Addr) bool {
	if len(s.cfg.Allow) == 0 {
		return true
	}
	for _, p := range s.cfg.Allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func formatPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// admission is what a session holds besides its slot: its client
// address's count and its CPU.
type admission struct {
	slot   int
	cpu    env.CPU
	client netip.Prefix // its clientKey
}

// admit takes a slot, a count for ip's client (clientKey) and, when it
// answers (not a load stream's target), a free CPU of device's (cpusOf),
// under s.mu; it returns the refusal to send when one of them is not free.
func (s *Server) admitLocked(ip netip.Addr, device string, answers bool) (admission, string, string) {
	k := clientKey(ip)
	if n := s.perClient[k]; n >= s.cfg.MaxPerClient {
		return admission{}, "per-client", fmt.Sprintf("rdmapeer is busy: %s already has %d sessions, this peer's limit per client address (rdmapeer -max-per-client); try again later", clientName(k), n)
	}
	var cpu env.CPU
	if cpus := s.cpusOf(device); len(cpus) > 0 && answers {
		var free bool
		if cpu, free = s.freeCPULocked(cpus); !free {
			return admission{}, "cpu", fmt.Sprintf("rdmapeer is busy: every answering CPU (rdmapeer -cpu %s) serves another session, and two sessions on one CPU would spoil each other's latency; try again later, or give rdmapeer more CPUs", formatCPUs(cpus))
		}
	}
	select {
	case slot := <-s.slots:
		s.perClient[k]++
		if id, pinned := cpu.ID(); pinned {
			s.cpuBusy[id] = true
		}
		return admission{slot: slot, cpu: cpu, client: k}, "", ""
	default:
		return admission{}, "busy", fmt.Sprintf("rdmapeer is busy: all %d of its session slots are taken (rdmapeer -max-sessions); try again later", s.cfg.MaxSessions)
	}
}

// releaseLocked gives back what admitLocked took.
func (s *Server) releaseLocked(a admission) {
	s.slots <- a.slot // slots has room for every slot: never blocks
	if s.perClient[a.client]--; s.perClient[a.client] <= 0 {
		delete(s.perClient, a.client)
	}
	if id, pinned := a.cpu.ID(); pinned {
		delete(s.cpuBusy, id)
	}
}

// cpusOf returns the answering CPUs of the device a connection's first
// Params name ("": the default device): its own in RailCPUs, else CPUs.
func (s *Server) cpusOf(device string) []int {
	if device == "" {
		device = s.cfg.Session.Device
	}
	if cpus, ok := s.cfg.RailCPUs[device]; ok {
		return cpus
	}
	return s.cfg.CPUs
}

func (s *Server) freeCPULocked(cpus []int) (env.CPU, bool) {
	for _, c := range cpus {
		if !s.cpuBusy[c] {
			return env.PinTo(c), true
		}
	}
	return env.CPU{}, false
}

func formatCPUs(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}

// pend counts a connection of ip in its handshake, unless ip's
// clientKey has MaxPendingPerClient already.
func (s *Server) pend(ip netip.Addr) bool {
	k := clientKey(ip)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pendingPer[k] >= s.cfg.MaxPendingPerClient {
		return false
	}
	s.pendingPer[k]++
	return true
}

func (s *Server) unpend(ip netip.Addr) {
	k := clientKey(ip)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pendingPer[k]--; s.pendingPer[k] <= 0 {
		delete(s.pendingPer, k)
	}
}

// clientKey is what the per-client limits (MaxPerClient,
// MaxPendingPerClient) count by: an IPv4 address alone, an IPv6 address's
// /64. One IPv6 host commonly holds a whole /64 (SLAAC, privacy addresses)
// and can draw as many addresses from it as it likes, so counting by
// address would let it take every place.
func clientKey(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64) // never fails for an IPv6 address
		return p
	}
	return netip.PrefixFrom(ip, ip.BitLen()) // the zero Addr: an invalid Prefix, one key
}

// clientName names a clientKey in messages: the address, or the /64.
func clientName(k netip.Prefix) string {
	if k.IsSingleIP() {
		return k.Addr().String()
	}
	return k.String()
}

// isLoad reports whether a connection's first request asks for a load
// stream's target (oob.FlagLoad), which takes no answering CPU.
func isLoad(first oob.Message) bool {
	p, ok := first.(oob.Params)
	return ok && p.Flags&oob.FlagLoad != 0
}
