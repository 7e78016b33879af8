package testenv

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
	"github.com/rdmabench/rdmabench/internal/pmqos"
	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/verbs"
)

// NewPair builds the pair the configuration asks for: a loopback pair in
// this process, or, with RDMABENCH_PEER set, a session with that rdmapeer
// (rdmalat.DialPeer; the dial and each step of the exchange are bounded by
// RDMABENCH_TIMEOUT). The pair measures op over c.Transport, with events
// when c.Events; maxSize is the largest message its buffers must hold.
func NewPair(c env.Config, op rdmalat.Op, maxSize int) (p *rdmalat.Pair, err error) {
	defer func() {
		if p != nil {
			p.Counters, p.Limits, p.Gap = c.Counters, c.Limits, c.Gap
		}
	}()
	ecfg := rdmalat.EndpointConfig{
		Device: c.Device, Port: c.Port, GIDIndex: c.GIDIndex,
		Op: op, Transport: c.Transport, Events: c.Events, CM: c.CM,
		MaxSize: maxSize, Inline: c.Inline, MTU: c.MTU, QoS: c.QoS,
		HugePages: c.HugePages, THP: c.THP, ODP: c.ODP,
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	// NUMA: the device's node (or RDMABENCH_NUMA's) takes the CPUs not
	// named and the buffers; nothing on a one-node host.
	place, err := c.Place(c.Device)
	if err != nil {
		return nil, err
	}
	ecfg.MemNode = place.Node
	cpus, err := c.PinCPUsAt(place)
	if err != nil {
		return nil, err
	}
	if c.Peer != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*c.Timeout+5*time.Second)
		defer cancel()
		p, err := rdmalat.DialPeer(ctx, c.Peer, rdmalat.RemoteConfig{Endpoint: ecfg, PeerDevice: c.PeerDevice, CPU: cpus[0], Timeout: c.Timeout, Token: c.PeerToken})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", env.VarPeer, err) // DialPeer names the address
		}
		if c.Load > 0 {
			if err = p.StartLoad(c.Load); err != nil {
				p.Close()
				return nil, err
			}
		}
		return p, nil
	}
	lp, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: ecfg, PeerDevice: c.PeerDevice, CPUs: cpus, Timeout: c.Timeout,
	})
	if err == nil && c.Load > 0 {
		if err = lp.StartLoad(c.Load); err != nil {
			lp.Close()
			lp = nil
		}
	}
	return lp, err
}

// MustPair returns the pair that measures op, with the skip-or-fail rules
// of MustHaveRDMA, closed when tb's cleanups run. In a benchmark, call it
// in the parent before b.Run so that every size and -count repetition
// shares one connection. An op that RDMABENCH_TRANSPORT cannot carry, or
// RDMABENCH_EVENTS with plain WRITE, skips tb with the reason: the
// variables choose a variant for the whole run, and each benchmark runs
// where the variant applies.
func MustPair(tb testing.TB, op rdmalat.Op, maxSize int) (*rdmalat.Pair, env.Config) {
	tb.Helper()
	return MustPairOn(tb, "", op, maxSize)
}

// MustRails returns the rails RDMABENCH_DEVICE names (env.Config.RailDevices:
// a list, or all active devices), failing tb when one cannot be used; nil
// when it names one device or none.
func MustRails(tb testing.TB) []string {
	tb.Helper()
	rails, err := MustLoad(tb).RailDevices(verbs.Probe{})
	if err != nil {
		tb.Fatal(err) // a set variable is a promise
	}
	return rails
}

// MustPairOn is MustPair on rail dev (one of MustRails), which meets the
// device env.Config.RailPeer pairs it with: in loopback mode itself (or
// RDMABENCH_PEER_DEVICE's device for it), in two-node mode rdmapeer's
// device of the same name (or RDMABENCH_PEER_DEVICE's); "" is MustPair's
// device.
func MustPairOn(tb testing.TB, dev string, op rdmalat.Op, maxSize int) (*rdmalat.Pair, env.Config) {
	tb.Helper()
	c := MustHaveRDMA(tb)
	if dev != "" {
		peer, err := c.RailPeer(MustRails(tb), dev)
		if err != nil {
			tb.Fatal(err) // a set variable is a promise
		}
		c.Device, c.PeerDevice = dev, peer
	}
	if err := c.Transport.Carries(op); err != nil {
		tb.Skipf("%s=%v: %v", env.VarTransport, c.Transport, err)
	}
	if c.Events && !op.Events() {
		tb.Skipf("%s=1: %v has no events mode in perftest (its receiver polls memory)", env.VarEvents, op)
	}
	// RDMABENCH_PMQOS: held from before the pair exists until after it is
	// closed (cleanups run last-in first-out), so the config lines record
	// it and every run of the pair measures under it.
	if c.PMQoS {
		q, err := pmqos.Hold(c.PMQoSLimit)
		if err != nil {
			tb.Fatalf("%s: %v", env.VarPMQoS, err)
		}
		tb.Cleanup(func() { q.Close() })
	}
	p, err := NewPair(c, op, maxSize)
	if err != nil {
		tb.Fatalf("setting up the RDMA pair: %v", err)
	}
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Errorf("closing the RDMA pair: %v", err)
		}
	})
	return p, c
}

// ConfigLines returns the benchmark configuration lines ("key: value")
// that label every result after them: the device and its firmware, link
// layer, MTU and GID, the transport, the mode, the CPUs and what moves
// their latency (governor, idle states), the device's interrupt affinity
// and the kernel. benchstat splits tables by them; compare across one
// with benchstat -col (for example -col rdma-fw).
func ConfigLines(p *rdmalat.Pair, c env.Config) []string {
	d := p.Local.Device()
	lines := [][2]string{
		{"rdmabench-mode", p.Mode},
		{"rdma-device", d.Name},
		{"rdma-fw", d.Firmware},
		{"rdma-part", fmt.Sprintf("%#x:%d", d.VendorID, d.PartID)},
		{"rdma-link-layer", d.LinkLayer},
		{"rdma-port", strconv.Itoa(d.Port)},
		{"rdma-mtu", strconv.Itoa(d.MTU)},
		{"rdma-gid-index", strconv.Itoa(d.GIDIndex)},
		{"rdma-gid-type", d.GIDType},
		{"rdma-transport", p.Local.Transport().String()},
		{"rdma-completion", completion(p.Local.Events())},
		{"rdma-cm", onOff(p.Local.CM())},
		{"rdma-inline-max", strconv.Itoa(d.Inline)},
		{"rdma-peer-device", p.PeerDevice.Name},
		{"rdma-peer-fw", p.PeerDevice.Firmware},
		{"rdmabench-cpus", env.FormatCPUs(measuring(p)...)},
		{"rdmabench-warmup", strconv.Itoa(c.Warmup)},
	}
	if p.Mode == "two-node" {
		lines = append(lines, [2]string{"rdma-peer-cpu", peerCPU(p)})
	}
	lines = append(lines, p.Local.QoS().ConfigLines()...) // none when unset
	// Placed: a host with several NUMA nodes (on one, no line, as before).
	if n, ok := p.Local.MemNode().ID(); ok {
		lines = append(lines, [2]string{"rdmabench-numa-node", strconv.Itoa(n)})
	}
	if p.Counters {
		lines = append(lines, [2]string{"rdma-counters", "on"})
	}
	if len(p.Limits) > 0 {
		lines = append(lines, [2]string{"rdmabench-max", formatLimits(p.Limits)})
	}
	// Only when set, as every line below: a result file of a run without
	// them still compares with one from before they existed.
	if p.Gap > 0 {
		lines = append(lines, [2]string{"rdmabench-gap", p.Gap.String()})
	}
	if n := p.Load(); n > 0 {
		lines = append(lines, [2]string{"rdmabench-load", strconv.Itoa(n)})
	}
	if p.Local.HugePages() {
		lines = append(lines, [2]string{"rdmabench-hugepages", "on"})
	}
	if c.THP {
		lines = append(lines, [2]string{"rdmabench-hugepages", "thp"})
	}
	if p.Local.ODP() {
		lines = append(lines, [2]string{"rdmabench-odp", "on"})
	}
	out := make([]string, 0, len(lines)+32)
	for _, kv := range lines {
		out = append(out, FormatConfig(kv[0], kv[1]))
	}
	for _, l := range hostReport(p).Lines {
		out = append(out, FormatConfig(l.Key, l.Value))
	}
	return out
}

// hostReport is what hostinfo finds on this host about the pair's device
// and the CPUs it measures on: both threads' in loopback mode, the
// initiator's in two-node mode.
func hostReport(p *rdmalat.Pair) hostinfo.Report {
	var cpus []int
	for _, c := range measuring(p) {
		if id, ok := c.ID(); ok {
			cpus = append(cpus, id)
		}
	}
	return hostinfo.Collect(hostinfo.Options{Device: p.Local.Device().Name, CPUs: cpus})
}

// measuring returns the CPUs of this host's busy-polling threads: both in
// loopback mode, the initiator's in two-node mode.
func measuring(p *rdmalat.Pair) []env.CPU {
	if p.Mode != "loopback" {
		return p.CPUs[:1]
	}
	return p.CPUs[:]
}

// peerCPU says where rdmapeer's thread answered and how many other
// sessions it served when this one opened: "3", "unpinned (2 other
// sessions on the peer)".
func peerCPU(p *rdmalat.Pair) string {
	v := p.PeerCPU.String()
	if p.PeerSessions > 0 {
		v += fmt.Sprintf(" (%d other sessions on the peer)", p.PeerSessions)
	}
	return v
}

func completion(events bool) string {
	if events {
		return "events"
	}
	return "poll"
}

// onOff says whether the queue pairs were connected through rdma_cm, as
// perftest's "rdma_cm QPs : ON/OFF" does.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// FormatConfig returns one configuration line. Keys are lower case without
// spaces (benchfmt's rule); a value has no line breaks and is never empty.
func FormatConfig(key, value string) string {
	key = strings.ToLower(strings.Join(strings.Fields(key), "-"))
	value = strings.Join(strings.Fields(value), " ")
	if value == "" {
		value = "unknown"
	}
	return key + ": " + value
}

// PrintConfig writes ConfigLines to w, one per line, and the first time in
// this process also hostinfo's notes (in the VM, how its host's CPUs slow
// each other) and warnings about this host (deep idle states, the
// governor, interrupts or NUMA placement of the measuring CPUs, SMT
// siblings, the clocksource, a hypervisor), each with what to do. benchstat
// labels results with the lines and skips the warnings, which start with
// "#". Call it from TestMain or a parent benchmark before b.Run: anything a
// leaf benchmark prints lands on its result line.
func PrintConfig(w io.Writer, p *rdmalat.Pair, c env.Config) error {
	text := strings.Join(ConfigLines(p, c), "\n") + "\n"
	warnOnce.Do(func() {
		r := hostReport(p)
		for _, l := range r.Notes {
			text += hostinfo.FormatNote(l)
		}
		for _, warn := range r.Warnings {
			text += warn.Format()
		}
	})
	_, err := io.WriteString(w, text)
	return err
}

// warnOnce: the warnings are about the host, the same for every benchmark
// and -count repetition of the process.
var warnOnce sync.Once

// formatLimits writes limits as RDMABENCH_MAX takes them.
func formatLimits(limits []latency.Limit) string { return latency.FormatLimits(limits) }
