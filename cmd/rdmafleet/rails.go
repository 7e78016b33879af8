package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// railPlan says which rails every pair of a job measures: src's rail
// Src[i] against dst's device Dst[i], one after the other. The rounds do
// not change with rails: a pair's rails run in its own slot.
type railPlan struct {
	All      bool     // -rails all: every active device, known on the nodes only
	Src, Dst []string // nil with All, and for one device
	ByName   bool     // dst's device is the rail's own name (RDMABENCH_PEER_DEVICE unset)
}

// planRails reads the rails a job measures: -rails (rails), else
// RDMABENCH_DEVICE's list, paired with dst's devices by name, or by
// position with RDMABENCH_PEER_DEVICE's list. dst's rdmapeer serves the
// rails themselves (rdmapeer -device), so a peer device outside them
// could never answer: it is refused, with what to type.
func planRails(rails string, getenv func(string) string) (railPlan, error) {
	devices := getenv(env.VarDevice)
	if rails != "" {
		devices = rails
	}
	cfg, err := env.LoadFrom(func(k string) string {
		switch k {
		case env.VarDevice:
			return devices
		case env.VarPeerDevice:
			return getenv(k)
		}
		return ""
	})
	if err != nil {
		return railPlan{}, err
	}
	var p railPlan
	switch {
	case len(cfg.Rails) == 0:
		return p, nil
	case cfg.Rails[0] == "all":
		p.All, p.ByName = true, len(cfg.PeerRails) == 0
		return p, nil
	}
	p.Src, p.Dst, p.ByName = cfg.Rails, cfg.Rails, len(cfg.PeerRails) == 0
	if !p.ByName {
		p.Dst = cfg.PeerRails
		for _, d := range p.Dst {
			if !slices.Contains(p.Src, d) {
				return railPlan{}, fmt.Errorf("%s=%s: dst's rdmapeer serves the rails %s only (-rails): name each rail's peer among them, in the order of the rails (%s=%s pairs rail %s with %s), or unset %s to pair each rail with the device of its name",
					env.VarPeerDevice, strings.Join(p.Dst, ","), strings.Join(p.Src, ","), env.VarPeerDevice, strings.Join(reversed(p.Src), ","), p.Src[0], p.Src[len(p.Src)-1], env.VarPeerDevice)
			}
		}
	}
	return p, nil
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// String describes the rails for the plan's header and the job's log; ""
// for one device.
func (p railPlan) String() string {
	switch {
	case p.All && p.ByName:
		return "every active device of src, in turn, each against dst's device of the same name (-rails all)"
	case p.All:
		return "every active device of src, in turn, against the devices of RDMABENCH_PEER_DEVICE in order (-rails all)"
	case len(p.Src) == 0:
		return ""
	}
	pairs := make([]string, len(p.Src))
	for i := range p.Src {
		pairs[i] = p.Src[i] + " with " + p.Dst[i]
	}
	how := "paired by name"
	if !p.ByName {
		how = "paired by position: " + env.VarPeerDevice
	}
	return fmt.Sprintf("%d rails in turn (src's device with dst's): %s (%s)", len(p.Src), strings.Join(pairs, ", "), how)
}
