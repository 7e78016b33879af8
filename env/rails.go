package env

import (
	"fmt"
	"slices"
	"strings"
)

// Rails: RDMABENCH_DEVICE may name several devices, one per rail of a node
// (an AI node has a NIC per GPU), as a list ("mlx5_0,mlx5_1") or "all"
// (every device with an active port). The benchmarks then measure each
// rail in turn, named in a /rail=DEV level of their names; with one device
// names stay as they were. Config.Device is the first rail, so that what
// takes one device (the tests, rdmainfo) takes that one.
//
// Each rail meets a device of the other side: in loopback mode itself, in
// two-node mode rdmapeer's device of the same name (nodes alike name their
// NICs alike), or RDMABENCH_PEER_DEVICE's, one per rail in the same order
// (rail i with the peer's device i: pairing by position, refused with
// "all", whose order the user does not choose). rdmapeer serves several devices
// (-device mlx5_0,mlx5_1 or all) and each rail's session names its own.

// railsAll is RDMABENCH_DEVICE's value for every active device.
const railsAll = "all"

// parseDevices reads RDMABENCH_DEVICE: a device, a list of them, or
// "all". It returns the first (Device; "" for all and for none) and the
// rails (nil for one device or none; {"all"} for all).
func parseDevices(v string) (first string, rails []string, err error) {
	v = strings.TrimSpace(v)
	if v == railsAll {
		return "", []string{railsAll}, nil
	}
	if !strings.Contains(v, ",") {
		return v, nil, nil
	}
	for _, d := range strings.Split(v, ",") {
		d = strings.TrimSpace(d)
		switch {
		case d == "" || strings.ContainsAny(d, " /\x00") || d == railsAll:
			return "", nil, fmt.Errorf("%s=%q: %q is not a device name; write devices separated by commas, e.g. %s=mlx5_0,mlx5_1, or %s=all for every active one", VarDevice, v, d, VarDevice, VarDevice)
		case slices.Contains(rails, d):
			return "", nil, fmt.Errorf("%s=%q: %s is named twice; name each rail once", VarDevice, v, d)
		}
		rails = append(rails, d)
	}
	return rails[0], rails, nil
}

// parsePeerDevices reads RDMABENCH_PEER_DEVICE: one device, or with
// rails a list of one per rail. It returns the first and, with rails, the
// list (rails is RDMABENCH_DEVICE's, parsed).
func parsePeerDevices(v string, rails []string) (first string, peers []string, err error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil, nil
	}
	if len(rails) == 0 {
		if strings.Contains(v, ",") {
			return "", nil, fmt.Errorf("%s=%q: a list pairs rails, and %s names one device; name one peer device, or the rails in %s (e.g. %s=mlx5_0,mlx5_1 %s=mlx5_2,mlx5_3)", VarPeerDevice, v, VarDevice, VarDevice, VarDevice, VarPeerDevice)
		}
		return v, nil, nil
	}
	if rails[0] == railsAll && strings.Contains(v, ",") {
		// Which rail is i-th would depend on the order the devices are
		// found in, which the user does not see: pair by name, or name
		// the rails.
		return "", nil, fmt.Errorf("%s=%s with %s=all: a list pairs rails by position, and all leaves their order to the host; name the rails in the order of the list (%s=DEV0,DEV1 %s=%s), or unset %s to pair each rail with the peer's device of its name", VarPeerDevice, v, VarDevice, VarDevice, VarPeerDevice, v, VarPeerDevice)
	}
	for _, d := range strings.Split(v, ",") {
		d = strings.TrimSpace(d)
		if d == "" || strings.ContainsAny(d, " /\x00") || d == railsAll {
			return "", nil, fmt.Errorf("%s=%q: %q is not a device name; write one device per rail of %s, separated by commas, e.g. %s=mlx5_0,mlx5_1", VarPeerDevice, v, d, VarDevice, VarPeerDevice)
		}
		peers = append(peers, d)
	}
	if rails[0] != railsAll && len(peers) != len(rails) {
		return "", nil, fmt.Errorf("%s=%s names %d devices for the %d rails of %s=%s: name one per rail, in the same order (rail i meets the peer's device i), or unset it", VarPeerDevice, v, len(peers), len(rails), VarDevice, strings.Join(rails, ","))
	}
	return peers[0], peers, nil
}

// RailPeer returns the device that rail (one of RailDevices, rails)
// meets: RDMABENCH_PEER_DEVICE's for it when set; else in two-node mode
// the peer's device of the same name, in loopback mode "" (itself).
func (c Config) RailPeer(rails []string, rail string) (string, error) {
	i := slices.Index(rails, rail)
	switch {
	case i < 0:
		return "", fmt.Errorf("%s: %s is not one of the rails %s", VarDevice, rail, strings.Join(rails, ","))
	case len(c.PeerRails) == 0 && c.Peer != "":
		return rail, nil
	case len(c.PeerRails) == 0:
		return "", nil
	case len(c.PeerRails) != len(rails):
		return "", fmt.Errorf("%s=%s names %d devices for the %d rails of %s=%s (%s): name one per rail, in the same order, or unset it", VarPeerDevice, strings.Join(c.PeerRails, ","), len(c.PeerRails), len(rails), VarDevice, strings.Join(c.Rails, ","), strings.Join(rails, ","))
	}
	return c.PeerRails[i], nil
}

// RailDevices returns the devices a run measures one after the other:
// those RDMABENCH_DEVICE lists, each checked to be present and active, or
// with "all" every device with an active port (an error when none has);
// nil when it names one device or none (the run measures Device alone, as
// before).
func (c Config) RailDevices(p Prober) ([]string, error) {
	if len(c.Rails) == 0 {
		return nil, nil
	}
	names, err := p.Devices()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", VarDevice, err)
	}
	if c.Rails[0] == railsAll {
		var active []string
		for _, n := range names {
			if p.Active(n) == nil {
				active = append(active, n)
			}
		}
		if len(active) == 0 {
			return nil, fmt.Errorf("%s=all: no device has an active port (present: %v): %w", VarDevice, names, ErrNoDevice)
		}
		return active, nil
	}
	for _, d := range c.Rails {
		if !slices.Contains(names, d) {
			return nil, fmt.Errorf("%s=%s: no such RDMA device %s (present: %v)", VarDevice, strings.Join(c.Rails, ","), d, names)
		}
		if err := p.Active(d); err != nil {
			return nil, fmt.Errorf("%s=%s: %s: %w", VarDevice, strings.Join(c.Rails, ","), d, err)
		}
	}
	return slices.Clone(c.Rails), nil
}
