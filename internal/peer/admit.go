package peer

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// Defaults of the admission limits.
const (
	// DefaultMaxPerClient bounds the sessions of one client address.
	DefaultMaxPerClient = 2
	// DefaultMaxPendingPerClient bounds one address's connections in
	// their handshake, so that one host's silent connections cannot take
	// all MaxHandshakes.
	DefaultMaxPendingPerClient = 16
)

// ParseAllow parses a comma-separated list of CIDR prefixes or bare
// addresses (rdmapeer -allow), e.g. "10.0.0.0/24,192.168.77.2".
func ParseAllow(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("-allow %q: %q is neither an address nor a CIDR prefix (example: -allow 10.0.0.0/24,192.168.77.2)", v, f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-allow %q: no prefix (example: -allow 10.0.0.0/24)", v)
	}
	return out, nil
}

// remoteIP is the address a connection comes from, IPv4-mapped ones
// unmapped; the zero Addr when it is not an IP connection.
func remoteIP(nc net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(nc.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
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
	slot int
	cpu  env.CPU
	ip   netip.Addr
}

// admit takes a slot, a count for ip and a free CPU, under s.mu; it
// returns the refusal to send when one of them is not free.
func (s *Server) admitLocked(ip netip.Addr) (admission, string, string) {
	if n := s.perClient[ip]; n >= s.cfg.MaxPerClient {
		return admission{}, "per-client", fmt.Sprintf("rdmapeer is busy: %s already has %d sessions, this peer's limit per client address (rdmapeer -max-per-client); try again later", ip, n)
	}
	var cpu env.CPU
	if len(s.cfg.CPUs) > 0 {
		var free bool
		if cpu, free = s.freeCPULocked(); !free {
			return admission{}, "cpu", fmt.Sprintf("rdmapeer is busy: every answering CPU (rdmapeer -cpu %s) serves another session, and two sessions on one CPU would spoil each other's latency; try again later, or give rdmapeer more CPUs", formatCPUs(s.cfg.CPUs))
		}
	}
	select {
	case slot := <-s.slots:
		s.perClient[ip]++
		if id, pinned := cpu.ID(); pinned {
			s.cpuBusy[id] = true
		}
		return admission{slot: slot, cpu: cpu, ip: ip}, "", ""
	default:
		return admission{}, "busy", fmt.Sprintf("rdmapeer is busy: all %d of its session slots are taken (rdmapeer -max-sessions); try again later", s.cfg.MaxSessions)
	}
}

// releaseLocked gives back what admitLocked took.
func (s *Server) releaseLocked(a admission) {
	s.slots <- a.slot // slots has room for every slot: never blocks
	if s.perClient[a.ip]--; s.perClient[a.ip] <= 0 {
		delete(s.perClient, a.ip)
	}
	if id, pinned := a.cpu.ID(); pinned {
		delete(s.cpuBusy, id)
	}
}

func (s *Server) freeCPULocked() (env.CPU, bool) {
	for _, c := range s.cfg.CPUs {
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
