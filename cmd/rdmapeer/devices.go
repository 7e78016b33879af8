package main

import (
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// parseDevices reads -device: one device, several separated by commas
// (the node's rails: a client names one per session), or "all" for every
// device with an active port. It returns nil for none (the first active
// device) and {"all"} for all.
func parseDevices(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "":
		return nil, nil
	case "all":
		return []string{"all"}, nil
	}
	var devs []string
	for _, d := range strings.Split(v, ",") {
		d = strings.TrimSpace(d)
		switch {
		case d == "" || d == "all" || strings.ContainsAny(d, " /\x00"):
			return nil, fmt.Errorf("-device %q: %q is not a device name; write one device, several separated by commas (-device mlx5_0,mlx5_1), or all", v, d)
		case slices.Contains(devs, d):
			return nil, fmt.Errorf("-device %q: %s is named twice; name each device once", v, d)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// resolveDevices turns -device into the devices served: nil becomes the
// first with an active port, "all" every one with an active port.
func resolveDevices(devs []string, p env.Prober) ([]string, error) {
	switch {
	case len(devs) == 0:
		d, err := env.FirstActive(p)
		if err != nil {
			return nil, fmt.Errorf("%v (name one with -device or RDMABENCH_DEVICE)", err)
		}
		return []string{d}, nil
	case devs[0] != "all":
		return devs, nil
	}
	names, err := p.Devices()
	if err != nil {
		return nil, fmt.Errorf("-device all: %w", err)
	}
	var active []string
	for _, n := range names {
		if p.Active(n) == nil {
			active = append(active, n)
		}
	}
	if len(active) == 0 {
		return nil, fmt.Errorf("-device all: no device has an active port (present: %v): %w", names, env.ErrNoDevice)
	}
	return active, nil
}

// openDevices opens each device once, so that a bad device, port or GID
// fails at start rather than in a client's session, and places its
// sessions' buffers (RDMABENCH_NUMA). It returns each device's placement
// (answeringCPUs places the answering threads by them) and the served
// devices.
func openDevices(o *options, logger *log.Logger) ([]env.Placement, peer.ServeConfig, error) {
	var places []env.Placement
	var sc peer.ServeConfig
	for i, name := range o.devices {
		probe, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: name, Port: o.port, GIDIndex: env.GIDSetting(o.gidIndex), MaxSize: 1, Inline: 0})
		if err != nil {
			return nil, sc, fmt.Errorf("device %s: %v", name, err)
		}
		dev := probe.Device()
		probe.Close()
		place, err := env.Config{NUMA: o.numa}.Place(name)
		if err != nil {
			return nil, sc, err
		}
		if n, ok := place.Node.ID(); ok {
			logger.Printf("device %s on NUMA node %d: its sessions' buffers there", name, n)
		}
		logger.Printf("device %s port %d (fw %s, %s, MTU %d, GID index %d %s)", dev.Name, dev.Port, dev.Firmware, dev.LinkLayer, dev.MTU, dev.GIDIndex, dev.GIDType)
		places = append(places, place)
		if i == 0 {
			sc.Device, sc.MemNode = name, place.Node
			continue
		}
		sc.Rails = append(sc.Rails, peer.Rail{Device: name, MemNode: place.Node})
	}
	return places, sc, nil
}

// answeringCPUs is the rule that places rdmapeer's answering threads when
// -cpu is not given, beside env.Place's for the buffers: each device
// answers on the last CPU of its own NUMA node that this process may use,
// where its buffers are; a device placed nowhere (one node, RDMABENCH_NUMA
// off, a node unknown, or no allowed CPU there) on def, the last CPU this
// process may use. It returns the first device's CPUs and, for each other
// device that answers on other CPUs, its own (peer.Config.RailCPUs; nil
// when every device answers on the first's). A node's rails on two
// sockets thus each answer on their own socket.
func answeringCPUs(devices []string, places []env.Placement, def []int) ([]int, map[string][]int) {
	of := func(p env.Placement) []int {
		if len(p.CPUs) == 0 {
			return def
		}
		return p.CPUs[len(p.CPUs)-1:]
	}
	first := of(places[0])
	var rails map[string][]int
	for i := 1; i < len(devices); i++ {
		if cpus := of(places[i]); !slices.Equal(cpus, first) {
			if rails == nil {
				rails = map[string][]int{}
			}
			rails[devices[i]] = cpus
		}
	}
	return first, rails
}
