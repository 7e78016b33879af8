package oob

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// DefaultPort is the TCP port rdmapeer listens on, perftest's.
const DefaultPort = 18515

// ParseAddr checks a peer address and returns it as host:port. It accepts
// host:port (a bracketed IPv6 host is fine) with a numeric port from 1 to
// 65535, or a bare host or IP address, which gets DefaultPort. The error
// matches ErrAddr and shows what to type instead, e.g.
// `peer address "nodeB:" has no port; want host:port, e.g. nodeB:18515`.
func ParseAddr(s string) (string, error) {
	addr, err := parseAddr(s)
	if err != nil {
		err.(*addrError).value = fmt.Sprintf("peer address %q", s)
		return "", err
	}
	return addr, nil
}

// ParseVar is ParseAddr for the value of the environment variable name
// (the caller reads it): "" gives "" and no error; a malformed value is an
// error naming the variable, e.g.
// `RDMABENCH_PEER="nodeB:" has no port; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`.
func ParseVar(name, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	addr, err := parseAddr(v)
	if err != nil {
		ae := err.(*addrError)
		ae.value = fmt.Sprintf("%s=%q", name, v)
		ae.example = name + "=" + ae.example
		return "", ae
	}
	return addr, nil
}

// addrError is a malformed peer address. It matches ErrAddr.
type addrError struct {
	value   string // what was given, quoted, e.g. `RDMABENCH_PEER="nodeB:"`
	why     string
	example string
}

func (e *addrError) Error() string {
	return fmt.Sprintf("%s %s; want host:port, e.g. %s", e.value, e.why, e.example)
}

func (e *addrError) Is(target error) bool { return target == ErrAddr }

func example(host string) string {
	if host == "" {
		host = "nodeB"
	}
	return net.JoinHostPort(host, strconv.Itoa(DefaultPort))
}

// parseAddr returns an *addrError with no value set.
func parseAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// A bare host: a name, an IPv4 address, or an IPv6 address with or
		// without brackets.
		h := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		balanced := strings.HasPrefix(s, "[") == strings.HasSuffix(s, "]")
		if _, ipErr := netip.ParseAddr(h); balanced && (ipErr == nil || (h != "" && !strings.ContainsAny(h, " /:[]"))) {
			return example(h), nil
		}
		if ip, ipErr := netip.ParseAddr(strings.Trim(strings.TrimSpace(s), "[]")); ipErr == nil {
			return "", &addrError{why: "is not an address (unbalanced brackets)", example: example(ip.String())}
		}
		h = strings.Trim(s, "[]: ")
		if strings.ContainsAny(h, " /[]:") {
			h = ""
		}
		return "", &addrError{why: "is not an address", example: example(h)}
	}
	switch {
	case host == "":
		return "", &addrError{why: "has no host", example: example("")}
	case strings.ContainsAny(host, " /"):
		return "", &addrError{why: "has no valid host", example: example("")}
	case port == "":
		return "", &addrError{why: "has no port", example: example(host)}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", &addrError{why: fmt.Sprintf("has port %q, not a number from 1 to 65535", port), example: example(host)}
	}
	return s, nil
}
