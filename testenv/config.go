// Package testenv says where rdmabench's tests and benchmarks run: which RDMA
// device, port and GID, whether a second node takes part, which CPUs to pin
// to, and whether an absent device is a skip or a failure.
//
// Everything comes from environment variables, so that `go test` needs no
// flags of its own and the soft-RoCE VM (cmd/rxevm) can configure a run:
//
//	RDMABENCH_DEVICE       RDMA device to use, e.g. mlx5_0 or rxe0.
//	                       Default: the first device with an active port.
//	RDMABENCH_PORT         port number on that device. Default: its first
//	                       active port.
//	RDMABENCH_GID_INDEX    GID table index (RoCE). Default: the best GID,
//	                       chosen like perftest: RoCE v2 over IPv4 first.
//	RDMABENCH_PEER_DEVICE  loopback only: the device of the responding
//	                       endpoint. Default: the same device. Naming a
//	                       second device makes traffic cross the wire (in
//	                       the VM, rxe1 -> rxe0 crosses a veth).
//	RDMABENCH_PEER         host:port of an rdmapeer (cmd/rdmapeer), or a bare
//	                       host for port 18515: two-node mode. Unset:
//	                       loopback mode, both endpoints in this process.
//	RDMABENCH_PEER_TOKEN   the shared secret of an rdmapeer that requires
//	                       one (its -token): answers its challenge, never
//	                       sent itself.
//	RDMABENCH_REQUIRE      1: a missing or unusable device fails tests
//	                       instead of skipping them. Set in the VM and in CI.
//	RDMABENCH_CPUS         CPUs to pin to: "A,B" pins the initiator to A and
//	                       the loopback responder to B; "none" disables
//	                       pinning. Default: the last two CPUs this process
//	                       may run on.
//	RDMABENCH_WARMUP       round trips run before measuring and left out of
//	                       every statistic. Default: 1000.
//	RDMABENCH_SIZES        message sizes in bytes, comma-separated, or "all"
//	                       for every power of two from 2 to 8 MiB (perftest
//	                       -a). Default: 2,64,4096,65536.
//	RDMABENCH_INLINE       largest message sent inline; 0 disables inline;
//	                       "device" takes the device's limit. Default:
//	                       perftest's for the operation (220 write, 236
//	                       send, 188 send over UD, none for READ and
//	                       atomics), at most the device's limit.
//	RDMABENCH_MTU          path MTU in bytes (256..4096). Default: the port's
//	                       active MTU.
//	RDMABENCH_TIMEOUT      how long any wait on the peer or on a completion
//	                       may last before failing, as a Go duration.
//	                       Default: 5s.
//	RDMABENCH_SAMPLES_DIR  write every raw sample, in order, to a file per
//	                       benchmark in this directory (perftest -U).
//	RDMABENCH_TRANSPORT    queue pair type: rc, uc or ud. Default: rc. A
//	                       benchmark whose operation the transport cannot
//	                       carry (READ over UC, WRITE over UD) is skipped
//	                       with the reason.
//	RDMABENCH_EVENTS       1: wait for completions on completion channels
//	                       (perftest -e) instead of busy-polling; every
//	                       operation but plain RDMA WRITE, which is skipped.
//	RDMABENCH_PMQOS        1: hold /dev/cpu_dma_latency at 0 while a benchmark's
//	                       pair is open (PM QoS: no deep idle states on any
//	                       CPU, the modern "nohalt"; needs root); a limit
//	                       such as 20us holds that. Recorded as pm-qos.

//	RDMABENCH_CM           1: connect the queue pairs through rdma_cm
//	                       (perftest -R) instead of exchanging QP numbers
//	                       over the TCP connection (two-node) or in
//	                       memory (loopback); RC and UD only.
//	RDMABENCH_VM           set to 1 by cmd/rxevm inside the soft-RoCE VM.
//
// A set variable is a promise: if it names something that cannot be used,
// tests fail with a message saying what to change; they skip only when
// nothing is configured and nothing is present.
package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// Names of the environment variables.
const (
	EnvDevice     = "RDMABENCH_DEVICE"
	EnvPort       = "RDMABENCH_PORT"
	EnvGIDIndex   = "RDMABENCH_GID_INDEX"
	EnvPeerDevice = "RDMABENCH_PEER_DEVICE"
	EnvPeer       = "RDMABENCH_PEER"
	EnvPeerToken  = "RDMABENCH_PEER_TOKEN"
	EnvRequire    = "RDMABENCH_REQUIRE"
	EnvCPUs       = "RDMABENCH_CPUS"
	EnvWarmup     = "RDMABENCH_WARMUP"
	EnvSizes      = "RDMABENCH_SIZES"
	EnvInline     = "RDMABENCH_INLINE"
	EnvMTU        = "RDMABENCH_MTU"
	EnvTimeout    = "RDMABENCH_TIMEOUT"
	EnvSamplesDir = "RDMABENCH_SAMPLES_DIR"
	EnvTransport  = "RDMABENCH_TRANSPORT"
	EnvEvents     = "RDMABENCH_EVENTS"
	EnvCM         = "RDMABENCH_CM"
	EnvVM         = "RDMABENCH_VM"
)

// Defaults.
const (
	DefaultWarmup  = 1000
	DefaultTimeout = 5 * time.Second
	MaxSize        = 8 << 20 // perftest -a's largest size
)

// DefaultSizes is the message sizes run when RDMABENCH_SIZES is unset.
var DefaultSizes = []int{2, 64, 4096, 65536}

// AllSizes returns every power of two from 2 bytes to 8 MiB, like perftest -a.
func AllSizes() []int {
	var s []int
	for n := 2; n <= MaxSize; n *= 2 {
		s = append(s, n)
	}
	return s
}

// Config is the environment's configuration. The zero value of a field
// means "choose the default" unless its comment says otherwise.
type Config struct {
	Device     string
	Port       int // 0: first active port
	GIDIndex   int // -1: best GID
	PeerDevice string
	Peer       string // host:port; empty: loopback
	PeerToken  string // the secret rdmapeer -token asks for; never printed
	Require    bool
	CPUs       []int // initiator, responder; nil: default choice
	NoPin      bool  // RDMABENCH_CPUS=none
	Warmup     int
	Sizes      []int
	Inline     int // rdmalat.InlinePerftest (default), rdmalat.InlineDevice, 0 (never) or bytes
	Transport  spec.Transport
	Events     bool
	CM         bool // RDMABENCH_CM=1: connect through rdma_cm
	SizesAll   bool // RDMABENCH_SIZES=all: sizes an operation cannot take are left out
	MTU        int  // 0: port's active MTU
	Timeout    time.Duration
	SamplesDir string
	InVM       bool
}

// Load reads the configuration from the process environment.
func Load() (Config, error) { return LoadFrom(os.Getenv) }

// LoadFrom reads the configuration through getenv. Every error names the
// variable, the bad value and what a good one looks like.
func LoadFrom(getenv func(string) string) (Config, error) {
	c := Config{
		Device:     strings.TrimSpace(getenv(EnvDevice)),
		PeerDevice: strings.TrimSpace(getenv(EnvPeerDevice)),
		GIDIndex:   -1,
		Warmup:     DefaultWarmup,
		Sizes:      DefaultSizes,
		Inline:     rdmalat.InlinePerftest,
		Transport:  spec.RC,
		Timeout:    DefaultTimeout,
		SamplesDir: getenv(EnvSamplesDir),
		InVM:       getenv(EnvVM) == "1",
	}
	var err error
	if c.Require, err = parseBool(getenv, EnvRequire); err != nil {
		return c, err
	}
	if c.Port, err = parseInt(getenv, EnvPort, 0, 1, 255, "a port number such as 1"); err != nil {
		return c, err
	}
	if c.GIDIndex, err = parseInt(getenv, EnvGIDIndex, -1, 0, 65535, "a GID table index such as 3 (see: show_gids, or ibv_devinfo -v)"); err != nil {
		return c, err
	}
	if c.Warmup, err = parseInt(getenv, EnvWarmup, DefaultWarmup, 0, 1e9, "a count of round trips such as 1000"); err != nil {
		return c, err
	}
	if strings.TrimSpace(getenv(EnvInline)) == "device" {
		c.Inline = rdmalat.InlineDevice
	} else if c.Inline, err = parseInt(getenv, EnvInline, rdmalat.InlinePerftest, 0, 1<<16, "a size in bytes such as 220, 0 to disable inline, or device for the device's limit"); err != nil {
		return c, err
	}
	if v := strings.TrimSpace(getenv(EnvTransport)); v != "" {
		t, perr := spec.ParseTransport(v)
		if perr != nil {
			return c, fmt.Errorf("%s=%q: %v (example: %s=ud)", EnvTransport, v, perr, EnvTransport)
		}
		c.Transport = t
	}
	if c.Events, err = parseBool(getenv, EnvEvents); err != nil {
		return c, err
	}
	if c.CM, err = parseBool(getenv, EnvCM); err != nil {
		return c, err
	}
	if c.CM && c.Transport == spec.UC {
		return c, fmt.Errorf("%s=1 with %s=uc: rdma_cm connects RC and UD queue pairs only (perftest -R refuses UC too); unset one of them", EnvCM, EnvTransport)
	}
	c.SizesAll = strings.TrimSpace(getenv(EnvSizes)) == "all"
	if c.MTU, err = parseMTU(getenv(EnvMTU)); err != nil {
		return c, err
	}
	if c.Sizes, err = ParseSizes(getenv(EnvSizes)); err != nil {
		return c, err
	}
	if c.CPUs, c.NoPin, err = parseCPUs(getenv(EnvCPUs)); err != nil {
		return c, err
	}
	if v := getenv(EnvTimeout); v != "" {
		d, perr := time.ParseDuration(v)
		if perr != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q is not a positive Go duration (example: %s=10s)", EnvTimeout, v, EnvTimeout)
		}
		c.Timeout = d
	}
	// host:port, or a bare host for port 18515 (oob.ParseAddr).
	c.PeerToken = getenv(EnvPeerToken)
	if c.Peer, err = oob.PeerFrom(getenv); err != nil {
		return c, err
	}
	return c, nil
}

// ParseSizes parses an RDMABENCH_SIZES value: comma-separated byte counts
// (suffixes K and M for KiB and MiB allowed), "all", or empty for
// DefaultSizes.
func ParseSizes(v string) ([]int, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "":
		return DefaultSizes, nil
	case "all":
		return AllSizes(), nil
	}
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		mult := 1
		switch {
		case strings.HasSuffix(f, "K"), strings.HasSuffix(f, "k"):
			mult, f = 1<<10, f[:len(f)-1]
		case strings.HasSuffix(f, "M"), strings.HasSuffix(f, "m"):
			mult, f = 1<<20, f[:len(f)-1]
		}
		n, err := strconv.Atoi(f)
		if err != nil || n*mult < 1 || n*mult > MaxSize {
			return nil, fmt.Errorf("%s=%q: %q is not a size from 1 byte to 8M (example: %s=2,4096,64K or %s=all)", EnvSizes, v, f, EnvSizes, EnvSizes)
		}
		sizes = append(sizes, n*mult)
	}
	return sizes, nil
}

func parseCPUs(v string) ([]int, bool, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "":
		return nil, false, nil
	case "none":
		return nil, true, nil
	}
	var cpus []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, false, fmt.Errorf("%s=%q: %q is not a CPU number (example: %s=2,3 pins the initiator to CPU 2 and the responder to 3; %s=none disables pinning)", EnvCPUs, v, f, EnvCPUs, EnvCPUs)
		}
		cpus = append(cpus, n)
	}
	if len(cpus) > 2 {
		return nil, false, fmt.Errorf("%s=%q names %d CPUs; give one (initiator) or two (initiator,responder)", EnvCPUs, v, len(cpus))
	}
	if len(cpus) == 2 && cpus[0] == cpus[1] {
		return nil, false, fmt.Errorf("%s=%q pins both busy-polling threads to one CPU, which starves one of them; name two CPUs", EnvCPUs, v)
	}
	return cpus, false, nil
}

func parseMTU(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err != nil:
	case n == 256, n == 512, n == 1024, n == 2048, n == 4096:
		return n, nil
	}
	return 0, fmt.Errorf("%s=%q is not an RDMA path MTU: use 256, 512, 1024, 2048 or 4096", EnvMTU, v)
}

func parseBool(getenv func(string) string, name string) (bool, error) {
	switch v := strings.TrimSpace(getenv(name)); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: use 1 or 0", name, v)
	}
}

func parseInt(getenv func(string) string, name string, def, lo, hi int, want string) (int, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s=%q: want %s", name, v, want)
	}
	return n, nil
}
