package oob

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// DefaultPort is the TCP port rdmapeer listens on, perftest's.
const DefaultPort = 18515

// EnvPeer names the environment variable that holds the peer's address.
const EnvPeer = "RDMABENCH_PEER"

// ParseAddr checks that s is host:port (a bracketed IPv6 host is fine) with
// a numeric port from 1 to 65535, and returns it. The error matches ErrAddr
// and shows what a valid value looks like.
func ParseAddr(s string) (string, error) {
	if err := checkAddr(s); err != nil {
		return "", fmt.Errorf("%w: %q %s", ErrAddr, s, err)
	}
	return s, nil
}

// PeerFromEnv returns the address in $RDMABENCH_PEER, or "" with no error
// when the variable is unset or empty. A set but malformed value is an
// error naming the variable, e.g.
// `RDMABENCH_PEER="nodeB" is not host:port (example: nodeB:18515)`.
func PeerFromEnv() (string, error) {
	v := os.Getenv(EnvPeer)
	if v == "" {
		return "", nil
	}
	if err := checkAddr(v); err != nil {
		return "", fmt.Errorf("%w: %s=%q %s", ErrAddr, EnvPeer, v, err)
	}
	return v, nil
}

// addrError is the tail of an address error, after the quoted value.
type addrError struct {
	why     string
	example string
}

func (e *addrError) Error() string {
	return fmt.Sprintf("%s (example: %s)", e.why, e.example)
}

func checkAddr(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		h := strings.Trim(s, "[]: ")
		if h == "" || strings.ContainsAny(h, " /") {
			h = "nodeB"
		}
		return &addrError{"is not host:port", net.JoinHostPort(h, strconv.Itoa(DefaultPort))}
	}
	ex := func() string {
		h := host
		if h == "" {
			h = "nodeB"
		}
		return net.JoinHostPort(h, strconv.Itoa(DefaultPort))
	}
	switch {
	case host == "":
		return &addrError{"has no host", ex()}
	case strings.ContainsAny(host, " /"):
		return &addrError{"has no valid host", "nodeB:" + strconv.Itoa(DefaultPort)}
	case port == "":
		return &addrError{"has no port", ex()}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return &addrError{fmt.Sprintf("has port %q, not a number from 1 to 65535", port), ex()}
	}
	return nil
}
