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
