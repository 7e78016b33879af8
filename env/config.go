package env

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/latency"
)

// Op and Transport are what a test measures: the operation and the queue
// pair's transport (the same types as rdmalat.Op and rdmalat.Transport).
type (
	Op        = spec.Op
	Transport = spec.Transport
)

// QoS is a queue pair's traffic class, flow label, service level and
// P_Key index (the same type as rdmalat.QoS).
type QoS = spec.QoS

// Defaults.
const (
	defaultWarmup  = 1000
	defaultTimeout = 5 * time.Second
	maxSize        = 8 << 20 // perftest -a's largest size

	// defaultMaxSamples caps the raw samples written per run: 10 million,
	// about 80 MB of text, a minute or more at the latencies seen here. An
	// hour of 3 us round trips would otherwise be about 8 GB.
	defaultMaxSamples = 10_000_000
)

// Named values of config fields. A zero GID index field takes its default
// (the best GID), so the real index 0 has a name of its own, and so do
// the explicit choices. An inline size is a number of bytes: 0 is never
// inline.
const (
	GIDBest        = -1 // a GID index field: the best GID, chosen like perftest (what 0 means too)
	GIDIndex0      = -2 // a GID index field: the entry at index 0
	InlineDevice   = -1 // Config.Inline: the device's limit
	InlinePerftest = -2 // Config.Inline: perftest's default for the operation, at most the device's limit
)

// defaultSizes is the message sizes run when RDMABENCH_SIZES is unset.
var defaultSizes = []int{2, 64, 4096, 65536}

// allSizes returns every power of two from 2 bytes to 8 MiB, like perftest -a.
func allSizes() []int {
	var s []int
	for n := 2; n <= maxSize; n *= 2 {
		s = append(s, n)
	}
	return s
}

// Config is the configuration the RDMABENCH_ variables give. Load fills
// every field, defaults included; in a Config built by hand a zero field
// takes the default, except Inline and Warmup, whose zero is a value (no
// inline, no warm-up): start from Default() for those.
type Config struct {
	Device     string   // "": the first device with an active port; with rails, the first rail
	Rails      []string // RDMABENCH_DEVICE's list, or {"all"}; nil: one device (RailDevices)
	Port       int      // 0: the device's first active port
	GIDIndex   int      // 0 or GIDBest: the best GID; GIDIndex0: index 0 (see GIDSetting)
	PeerDevice string   // the responder's device (loopback), or rdmapeer's (two-node); "": Device, or the peer's first; with rails, the first rail's
	PeerRails  []string // with rails, RDMABENCH_PEER_DEVICE's list: rail i meets PeerRails[i] (RailPeer)
	Peer       string   // host:port of an rdmapeer; "": loopback
	PeerToken  string   // the secret rdmapeer -token asks for; never printed
	Require    bool     // an absent device fails instead of skipping
	CPUs       []int    // initiator[, responder]; nil: DefaultCPUs
	NoPin      bool     // RDMABENCH_CPUS=none
	Warmup     int
	Sizes      []int // nil: the default sizes (2, 64, 4096 and 65536 bytes)
	SizesAll   bool  // RDMABENCH_SIZES=all: sizes an operation cannot take are left out
	Inline     int   // InlinePerftest, InlineDevice, 0 (never) or bytes
	Transport  Transport
	Events     bool
	CM         bool          // connect through rdma_cm
	MTU        int           // 0: the port's active MTU
	Timeout    time.Duration // 0: the default, 5 s
	SamplesDir string        // "": raw samples are not written
	MaxSamples int64         // raw samples written per run at most; 0: none
	PMQoS      bool          // hold the CPU wake-up latency limit at PMQoSLimit
	PMQoSLimit time.Duration
	QoS        QoS             // traffic class, flow label, SL, P_Key index; zero: the defaults
	Counters   bool            // report port counter deltas per operation
	Limits     []latency.Limit // RDMABENCH_MAX; nil: none
	Gap        time.Duration   // idle before each round trip; 0: back to back
	Load       int             // load stream's message size; 0: none
	HugePages  bool            // buffers backed by reserved huge pages (MAP_HUGETLB)
	THP        bool            // buffers backed by transparent huge pages (RDMABENCH_HUGEPAGES=thp)
	ODP        bool            // buffers registered with on-demand paging
	NUMA       NUMA            // RDMABENCH_NUMA; zero: the device's node
	InVM       bool            // running inside cmd/rxevm's VM
}

// Default returns the configuration of an empty environment.
func Default() Config {
	return Config{
		GIDIndex:  GIDBest,
		Warmup:    defaultWarmup,
		Sizes:     defaultSizes,
		Inline:    InlinePerftest,
		Transport: spec.RC,
		Timeout:   defaultTimeout,

		MaxSamples: defaultMaxSamples,
	}
}

// Load reads the configuration from the process environment.
func Load() (Config, error) { return LoadFrom(os.Getenv) }

// LoadFrom reads the configuration through getenv. Every error names the
// variable, the bad value and what a good one looks like.
func LoadFrom(getenv func(string) string) (Config, error) {
	c := Default()
	var err error
	c.Device, c.Rails, err = parseDevices(getenv(VarDevice))
	if err != nil {
		return c, err
	}
	if c.PeerDevice, c.PeerRails, err = parsePeerDevices(getenv(VarPeerDevice), c.Rails); err != nil {
		return c, err
	}
	c.SamplesDir = getenv(VarSamplesDir)
	c.PeerToken = getenv(VarPeerToken)
	if c.InVM, err = parseBool(getenv, VarVM); err != nil {
		return c, err
	}
	if c.Require, err = parseBool(getenv, VarRequire); err != nil {
		return c, err
	}
	if c.Port, err = parseInt(getenv, VarPort, 0, 1, 255, "a port number such as 1"); err != nil {
		return c, err
	}
	var gid int
	if gid, err = parseInt(getenv, VarGIDIndex, GIDBest, 0, 65535, "a GID table index such as 3 (see: show_gids, or ibv_devinfo -v)"); err != nil {
		return c, err
	}
	c.GIDIndex = GIDSetting(gid)
	if c.Warmup, err = parseInt(getenv, VarWarmup, defaultWarmup, 0, 1e9, "a count of round trips such as 1000"); err != nil {
		return c, err
	}
	if strings.TrimSpace(getenv(VarInline)) == "device" {
		c.Inline = InlineDevice
	} else if c.Inline, err = parseInt(getenv, VarInline, InlinePerftest, 0, 1<<16, "a size in bytes such as 220, 0 to disable inline, or device for the device's limit"); err != nil {
		return c, err
	}
	if v := strings.TrimSpace(getenv(VarTransport)); v != "" {
		t, perr := spec.ParseTransport(v)
		if perr != nil {
			return c, fmt.Errorf("%s=%q: %v (example: %s=ud)", VarTransport, v, perr, VarTransport)
		}
		c.Transport = t
	}
	if c.Events, err = parseBool(getenv, VarEvents); err != nil {
		return c, err
	}
	if c.CM, err = parseBool(getenv, VarCM); err != nil {
		return c, err
	}
	if c.CM && c.Transport == spec.UC {
		return c, fmt.Errorf("%s=1 with %s=uc: rdma_cm connects RC and UD queue pairs only (perftest -R refuses UC too); unset one of them", VarCM, VarTransport)
	}
	c.SizesAll = strings.TrimSpace(getenv(VarSizes)) == "all"
	if c.MTU, err = parseMTU(getenv(VarMTU)); err != nil {
		return c, err
	}
	if c.Sizes, err = ParseSizes(VarSizes, getenv(VarSizes)); err != nil {
		return c, err
	}
	if c.CPUs, c.NoPin, err = ParseCPUs(VarCPUs, getenv(VarCPUs)); err != nil {
		return c, err
	}
	if c.MaxSamples, err = parseMaxSamples(getenv(VarMaxSamples)); err != nil {
		return c, err
	}
	if c.Timeout, err = parseTimeout(getenv(VarTimeout)); err != nil {
		return c, err
	}
	if c.PMQoS, c.PMQoSLimit, err = parsePMQoS(getenv(VarPMQoS)); err != nil {
		return c, err
	}
	if c.Limits, err = latency.ParseLimits(VarMax, getenv(VarMax)); err != nil {
		return c, err
	}
	if c.NUMA, err = parseNUMA(getenv(VarNUMA)); err != nil {
		return c, err
	}
	if c.Counters, err = parseBool(getenv, VarCounters); err != nil {
		return c, err
	}
	if c.Gap, err = parseGap(getenv(VarGap), c.Timeout); err != nil {
		return c, err
	}
	if c.Load, err = parseLoad(getenv(VarLoad)); err != nil {
		return c, err
	}
	if c.HugePages, c.THP, err = parseHugePages(getenv(VarHugePages)); err != nil {
		return c, err
	}
	if c.ODP, err = parseBool(getenv, VarODP); err != nil {
		return c, err
	}
	if c.QoS, err = parseQoS(getenv); err != nil {
		return c, err
	}
	if c.CM && (c.QoS.FlowLabel != 0 || c.QoS.SL != 0 || c.QoS.PKeyIndex != 0) {
		return c, fmt.Errorf("%s=1 with %s, %s or %s: rdma_cm gives the queue pair the flow label, service level and P_Key of its route and address (librdmacm has no option for them but a whole InfiniBand path record); with rdma_cm only %s applies (unset the others, or %s)", VarCM, VarFlowLabel, VarSL, VarPKeyIndex, VarTClass, VarCM)
	}
	// host:port, or a bare host for port 18515.
	if c.Peer, err = oob.ParseVar(VarPeer, getenv(VarPeer)); err != nil {
		return c, err
	}
	return c, nil
}
