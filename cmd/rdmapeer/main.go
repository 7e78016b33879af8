// Command rdmapeer is the second node of rdmabench's two-node mode: it
// answers the RDMA round trips of benchmarks run on another node with
// RDMABENCH_PEER=thisnode:18515.
//
//	rdmapeer [-listen :18515] [-device mlx5_0] [-cpu 3] [-max-sessions 4] ...
//
// It takes no benchmark options: the client sends every parameter of a
// session (operation, sizes, MTU, inline, timeout), so the two sides cannot
// disagree. What belongs to this node comes from flags or from the same
// variables the tests read: the device (-device, RDMABENCH_DEVICE; default
// the first device with an active port; several, -device mlx5_0,mlx5_1 or
// all, serve a node's rails: each client session names one, and a client
// naming none gets the first), its port (-port, RDMABENCH_PORT)
// and GID (-gid-index, RDMABENCH_GID_INDEX; default the best, RoCE v2 over
// IPv4 first), and the CPU its answering threads are pinned to (-cpu,
// default the last CPU it may use; on a host of several NUMA nodes the last
// of each device's own node, so that each rail answers where its buffers
// are).
//
// It serves sessions one after another and -max-sessions at once (more
// clients are told it is busy), until SIGINT or SIGTERM, and logs one line
// per session on standard error: client, operation, sizes, runs, round
// trips, duration and result. Each session registers only its own buffer,
// with only the remote access its operation needs, and frees it when it
// ends: when the client closes the connection, or dies (its socket
// closes: the answering loop stops at once), or stalls (the loop's idle
// timeout, which the client sets: RDMABENCH_TIMEOUT). A client measuring
// under a load stream (RDMABENCH_LOAD) opens a second session, the
// stream's target: a buffer its RDMA WRITEs land in, with no answering
// thread and no CPU, logged as load-stream with the bytes it took. The first line on
// standard output is "rdmapeer listening on ADDR".
//
// By default it listens on every address, port 18515 (perftest's); use
// -listen to restrict it, e.g. -listen 192.168.1.2:18515, -allow to serve
// only some client addresses, and a shared token (RDMABENCH_PEER_TOKEN in
// the environment of both sides, or -token) so that only clients that
// know it are served. docs/security.md says what a client can and cannot
// do to this node. A second SIGINT or SIGTERM exits at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/verbs"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// options is the command line.
type options struct {
	listen        string
	devices       []string // -device: nil for the first active, {"all"}, or a list (rails)
	port          int
	gidIndex      int
	cpus          []int // nil: not pinned
	cpuDefault    bool  // -cpu not given: placed by the NUMA rule once the device is known
	numa          env.NUMA
	maxSessions   int
	maxMemory     int64
	maxSize       int64
	maxRoundTrips uint64
	maxTimeout    time.Duration
	timeout       time.Duration
	idle          time.Duration
	handshake     time.Duration
	token         string
	allow         []netip.Prefix
	maxPerClient  int
}

// parseFlags reads args, with defaults from the RDMABENCH_ variables.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	cfg, err := env.LoadFrom(getenv)
	if err != nil {
		return nil, err
	}
	o := &options{}
	fs := flag.NewFlagSet("rdmapeer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmapeer [flags]\n\nAnswers rdmabench benchmarks run on another node with RDMABENCH_PEER=thisnode:%d.\n\n", oob.DefaultPort)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.listen, "listen", ":"+strconv.Itoa(oob.DefaultPort), "`address` to listen on; the default is every address of this host")
	defDevice := cfg.Device
	if len(cfg.Rails) > 0 {
		defDevice = strings.Join(cfg.Rails, ",")
	}
	device := fs.String("device", defDevice, "RDMA `devices` to serve: one, several separated by commas (a node's rails: each client session names one, RDMABENCH_PEER_DEVICE; the first is the default), or all (every device with an active port) (default $RDMABENCH_DEVICE, else the first device with an active port)")
	fs.IntVar(&o.port, "port", cfg.Port, "device `port` (default $RDMABENCH_PORT, else the first active port)")
	fs.IntVar(&o.gidIndex, "gid-index", env.GIDIndexOf(cfg.GIDIndex), "GID table `index` (default $RDMABENCH_GID_INDEX, else the best: RoCE v2 over IPv4 first; -1: the best)")
	cpu := fs.String("cpu", "", "`CPUs` to pin the answering threads to, e.g. 3 or 2,3 (concurrent sessions take them in turn), or none (default: the last CPU this process may use; on a host with several NUMA nodes, the last of each device's node, rail by rail: RDMABENCH_NUMA)")
	fs.IntVar(&o.maxSessions, "max-sessions", peer.DefaultMaxSessions, "most sessions served at once; more clients are told the peer is busy")
	maxMemory := fs.String("max-memory", "64M", "registered memory all sessions together may hold, in `bytes` (suffix K, M, G)")
	maxSize := fs.String("max-size", "8M", "largest message a client may ask for, in `bytes` (suffix K, M, G)")
	fs.Uint64Var(&o.maxRoundTrips, "max-round-trips", oob.DefaultLimits.MaxRoundTrips, "round trips one run may take, warm-up included")
	fs.DurationVar(&o.maxTimeout, "max-timeout", oob.DefaultLimits.MaxIdleTimeout, "longest RDMA loop idle timeout a client may ask for (its RDMABENCH_TIMEOUT): how long a stalled client can keep a CPU of this node busy-polling")
	fs.DurationVar(&o.timeout, "timeout", cfg.Timeout, "bound on each step of the exchange with a client, and the loops' idle timeout when a client sets none (default $RDMABENCH_TIMEOUT, else 5s)")
	o.idle = peer.DefaultIdle
	fs.Var((*idleFlag)(&o.idle), "idle", "longest `wait` for a client's next request between runs (default 10m0s), or none for no limit")
	fs.DurationVar(&o.handshake, "handshake-timeout", peer.DefaultHandshakeTimeout, "how long a new connection may take from its accept to its first Params (hello, challenge, answer) before it is dropped; until then it holds no session slot")
	// No default shown: the usage must never print the token.
	token := fs.String("token", "", "shared `secret` every client must prove it knows (its RDMABENCH_PEER_TOKEN); default $RDMABENCH_PEER_TOKEN, which, unlike this flag, other users of the host cannot read in the process list")
	allow := fs.String("allow", "", "serve only clients from these `prefixes`, e.g. 10.0.0.0/24,192.168.77.2 (default: any address)")
	fs.IntVar(&o.maxPerClient, "max-per-client", peer.DefaultMaxPerClient, "most sessions one client address may hold at once")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.token = cfg.PeerToken
	if set["token"] {
		o.token = *token
	}
	// An -allow given but empty is an error, not "any address": -allow
	// "$HOSTS" with HOSTS unset must not open the peer to everyone.
	if set["allow"] {
		if o.allow, err = peer.ParseAllow(*allow); err != nil {
			return nil, err
		}
	}
	if o.maxPerClient < 1 {
		return nil, fmt.Errorf("-max-per-client %d: want at least 1", o.maxPerClient)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("rdmapeer takes no arguments, only flags (got %q): benchmark options come from the client", fs.Args())
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return nil, fmt.Errorf("-listen %q: want host:port or :port (example: -listen 192.168.1.2:%d)", o.listen, oob.DefaultPort)
	}
	if o.maxSessions < 1 {
		return nil, fmt.Errorf("-max-sessions %d: want at least 1", o.maxSessions)
	}
	if o.maxMemory, err = env.ParseBytes("-max-memory", *maxMemory, 1<<40); err != nil {
		return nil, err
	}
	if o.maxSize, err = env.ParseBytes("-max-size", *maxSize, 1<<40); err != nil {
		return nil, err
	}
	if o.maxSize > 1<<31-1 {
		return nil, fmt.Errorf("-max-size %s: at most 2G", *maxSize)
	}
	if 2*o.maxSize > o.maxMemory {
		return nil, fmt.Errorf("-max-size %s needs %d bytes registered per session, over -max-memory %s", *maxSize, 2*o.maxSize, *maxMemory)
	}
	if o.maxRoundTrips < 1 {
		return nil, errors.New("-max-round-trips 0: want at least 1")
	}
	if o.timeout <= 0 || o.maxTimeout <= 0 || o.handshake <= 0 {
		return nil, errors.New("-timeout, -max-timeout and -handshake-timeout must be positive (example: -timeout 5s)")
	}
	if o.timeout > o.maxTimeout {
		// -timeout is the loop timeout of a client that asks for none: it
		// may not be longer than what a client may ask for.
		from := fmt.Sprintf("-timeout %v", o.timeout)
		switch {
		case set["timeout"]:
		case getenv(env.VarTimeout) != "":
			from = fmt.Sprintf("%s=%s (rdmapeer's -timeout)", env.VarTimeout, getenv(env.VarTimeout))
		default:
			from += " (the default)"
		}
		return nil, fmt.Errorf("%s is over -max-timeout %v, the longest RDMA loop timeout a client may ask for: give -timeout %v or less, or raise -max-timeout", from, o.maxTimeout, o.maxTimeout)
	}
	if o.devices, err = parseDevices(*device); err != nil {
		return nil, err
	}
	if o.cpus, err = parseCPUs(*cpu); err != nil {
		return nil, err
	}
	o.cpuDefault, o.numa = strings.TrimSpace(*cpu) == "", cfg.NUMA
	return o, nil
}

// parseCPUs parses -cpu: empty for the loopback responder's default CPU
// (env.DefaultCPUs: the last this process may use), "none", or a CPU list
// (env.ParseCPUList: 3, 2,3 or 2-5), each a CPU this process may use and
// none named twice, so that a bad choice fails here and not in a
// client's session.
func parseCPUs(v string) ([]int, error) {
	switch v = strings.TrimSpace(v); v {
	case "none":
		return nil, nil
	case "":
		def, err := env.DefaultCPUs()
		if err != nil {
			return nil, err
		}
		if len(def) == 0 {
			return nil, errors.New("sched_getaffinity: no CPU allowed")
		}
		return def[len(def)-1:], nil
	}
	cpus, err := env.ParseCPUList(v)
	if err != nil {
		return nil, fmt.Errorf("-cpu %q: %v (each session answers on a CPU of its own; example: -cpu 3, -cpu 2,3, -cpu 2-5 or -cpu none)", v, err)
	}
	if err := env.CheckCPUs("-cpu", cpus); err != nil {
		return nil, err
	}
	return cpus, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	logger := log.New(stderr, "rdmapeer: ", log.LstdFlags|log.Lmicroseconds)
	o, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "rdmapeer:", err)
		return 2
	}
	if o.devices, err = resolveDevices(o.devices, verbs.Probe{}); err != nil {
		logger.Printf("%v", err)
		return 1
	}
	// Each device opened once now; NUMA (RDMABENCH_NUMA on this host):
	// each device's sessions' buffers on its node, and without -cpu its
	// answering threads on the last CPU of that node (answeringCPUs). One
	// node: nothing changes.
	places, served, err := openDevices(o, logger)
	if err != nil {
		logger.Printf("%v", err)
		return 1
	}
	var railCPUs map[string][]int
	if o.cpuDefault {
		o.cpus, railCPUs = answeringCPUs(o.devices, places, o.cpus)
	}
	for i, p := range places {
		if n, ok := p.Node.ID(); ok {
			cpus := o.cpus
			if c, own := railCPUs[o.devices[i]]; own {
				cpus = c
			}
			logger.Printf("NUMA node %d (%s's): answering on CPUs %s", n, o.devices[i], env.FormatCPUList(cpus))
		}
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		logger.Printf("%v", err)
		return 1
	}
	fmt.Fprintf(stdout, "rdmapeer listening on %s\n", ln.Addr())
	where := ""
	if h, _, _ := net.SplitHostPort(o.listen); h == "" {
		where = " (every address of this host; -listen host:port restricts it)"
	}
	cpuDesc := "not pinned"
	if len(o.cpus) > 0 {
		cpuDesc = "pinned to CPU " + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(o.cpus)), ","), "[]")
	}
	for _, d := range o.devices {
		if cpus, own := railCPUs[d]; own {
			cpuDesc += fmt.Sprintf(" (%s's sessions: CPU %s)", d, env.FormatCPUList(cpus))
		}
	}
	logger.Printf("listening on %s%s; devices %s (the first unless a client names another); answering threads %s; up to %d sessions, %d bytes per message, %d bytes registered",
		ln.Addr(), where, strings.Join(o.devices, ","), cpuDesc, o.maxSessions, o.maxSize, o.maxMemory)

	auth := "no token: any client that reaches this port is served (set RDMABENCH_PEER_TOKEN)"
	if o.token != "" {
		auth = "clients must prove the token"
	}
	who := "clients from any address"
	if len(o.allow) > 0 {
		who = "clients from " + allowText(o.allow) + " only"
	}
	logger.Printf("%s; %s; up to %d sessions per client address; RDMA loop timeout at most %v", who, auth, o.maxPerClient, o.maxTimeout)

	srv := peer.New(peer.Config{
		Session: peer.ServeConfig{
			Device: served.Device, Rails: served.Rails, Port: o.port, GIDIndex: o.gidIndex, MemNode: served.MemNode,
			Limits: oob.Limits{
				MaxSize: uint32(o.maxSize), MaxRoundTrips: o.maxRoundTrips, MaxIdleTimeout: o.maxTimeout,
			},
			Idle: o.idle, Timeout: o.timeout,
		},
		CPUs: o.cpus, RailCPUs: railCPUs, MaxSessions: o.maxSessions, MaxMemory: o.maxMemory, Timeout: o.timeout, HandshakeTimeout: o.handshake,
		Token: o.token, Allow: o.allow, MaxPerClient: o.maxPerClient,
		Logf: logger.Printf,
	})
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	return serveUntil(ctx, sigc, errc, srv.Shutdown, func() string {
		st := srv.Stats()
		return fmt.Sprintf("stopped: %d sessions (%d failed), %d connections refused; open verbs objects %v, registered bytes %d",
			st.Sessions, st.Failed, st.Refused, openObjects(), st.Memory)
	}, logger.Printf)
}

// serveUntil waits for a signal, ctx or a failed Serve, then shuts down;
// a second signal while Shutdown waits for sessions to end exits at once
// (status 1), as an operator pressing Ctrl-C twice expects.
func serveUntil(ctx context.Context, sigc <-chan os.Signal, errc <-chan error, shutdown func(), summary func() string, logf func(string, ...any)) int {
	status := 0
	select {
	case sig := <-sigc:
		logf("%v: shutting down (again to exit at once)", sig)
	case <-ctx.Done():
		logf("%v: shutting down", context.Cause(ctx))
	case err := <-errc:
		logf("accept: %v", err)
		status = 1
	}
	done := make(chan struct{})
	go func() {
		shutdown()
		close(done)
	}()
	select {
	case <-done:
	case sig := <-sigc:
		logf("%v again: exiting without waiting for the sessions to end", sig)
		return 1
	}
	logf("%s", summary())
	return status
}

func allowText(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// idleFlag is -idle as peer.ServeConfig.Idle: a positive duration, or
// "none" for peer.NoIdleLimit. 0 is refused rather than given a meaning:
// the config's zero is the default, and a flag's 0 reads as "none".
type idleFlag time.Duration

func (f *idleFlag) String() string {
	if time.Duration(*f) == peer.NoIdleLimit {
		return "none"
	}
	return time.Duration(*f).String()
}

func (f *idleFlag) Set(v string) error {
	if strings.TrimSpace(v) == "none" {
		*f = idleFlag(peer.NoIdleLimit)
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 30m, or none for no limit")
	}
	*f = idleFlag(d)
	return nil
}

// openObjects lists the verbs objects still open (none, once every session
// has ended), for the last log line.
func openObjects() string {
	var open []string
	for k, n := range verbs.OpenObjects() {
		if n != 0 {
			open = append(open, fmt.Sprintf("%s=%d", k, n))
		}
	}
	if len(open) == 0 {
		return "none"
	}
	slices.Sort(open)
	return strings.Join(open, " ")
}
