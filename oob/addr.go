package oob

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// DefaultPort is the TCP port rdmapeer listens on, perftest's.
const DefaultPort = 18515

// EnvPeer names the environment variable that holds the peer's address.
const EnvPeer = "RDMABENCH_PEER"

// ParseAddr checks a peer address and returns it as host:port. It accepts
// host:port (a bracketed IPv6 host is fine) with a numeric port from 1 to
// 65535, or a bare host or IP address, which gets DefaultPort. The error
// matches ErrAddr and shows what a valid value looks like.
func ParseAddr(s string) (string, error) {
	addr, err := parseAddr(s)
	if err != nil {
		return "", fmt.Errorf("%w: %q %s", ErrAddr, s, err)
	}
	return addr, nil
}

// PeerFromEnv returns the address in $RDMABENCH_PEER (see ParseAddr), or ""
// with no error when the variable is unset or empty.
func PeerFromEnv() (string, error) { return PeerFrom(os.Getenv) }

// PeerFrom is PeerFromEnv reading the environment through getenv. A set but
// malformed value is an error naming the variable, e.g.
// `RDMABENCH_PEER="nodeB:" has no port (example: nodeB:18515)`.
func PeerFrom(getenv func(string) string) (string, error) {
	v := strings.TrimSpace(getenv(EnvPeer))
	if v == "" {
		return "", nil
	}
	addr, err := parseAddr(v)
	if err != nil {
		return "", fmt.Errorf("%w: %s=%q %s", ErrAddr, EnvPeer, v, err)
	}
	return addr, nil
}

// addrError is the tail of an address error, after the quoted value.
type addrError struct {
	why     string
	example string
}

func (e *addrError) Error() string {
	return fmt.Sprintf("%s (example: %s)", e.why, e.example)
}

func example(host string) string {
	if host == "" {
		host = "nodeB"
	}
	return net.JoinHostPort(host, strconv.Itoa(DefaultPort))
}

func parseAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// A bare host: a name, an IPv4 address, or an IPv6 address with or
		// without brackets.
		h := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		if _, ipErr := netip.ParseAddr(h); ipErr == nil || (h != "" && !strings.ContainsAny(h, " /:[]")) {
			return example(h), nil
		}
		h = strings.Trim(s, "[]: ")
		if strings.ContainsAny(h, " /[]:") {
			h = ""
		}
		return "", &addrError{"is not host:port", example(h)}
	}
	switch {
	case host == "":
		return "", &addrError{"has no host", example("")}
	case strings.ContainsAny(host, " /"):
		return "", &addrError{"has no valid host", example("")}
	case port == "":
		return "", &addrError{"has no port", example(host)}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", &addrError{fmt.Sprintf("has port %q, not a number from 1 to 65535", port), example(host)}
	}
	return s, nil
}
