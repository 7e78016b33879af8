package verbs

import (
	"fmt"
	"sync"
)

// Probe answers what package env's device rules ask (it is an
// env.Prober) through libibverbs. Its zero value is ready.
type Probe struct{}

// deviceNames lists the devices once per process: the answer does not
// change during a run, and listing is slow under emulation.
var deviceNames = sync.OnceValues(func() ([]string, error) {
	devs, err := Devices()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		names = append(names, d.Name)
	}
	return names, nil
})

// Devices returns the names of the devices present (ibv_get_device_list).
func (Probe) Devices() ([]string, error) { return deviceNames() }

// Active returns nil when the device has a port in state ACTIVE, else why
// not.
func (Probe) Active(device string) error {
	ctx, err := Open(device)
	if err != nil {
		return err
	}
	defer ctx.Close()
	attr, err := ctx.Query()
	if err != nil {
		return err
	}
	for p := 1; p <= int(attr.PhysPortCount); p++ {
		pa, err := ctx.QueryPort(uint8(p))
		if err == nil && pa.State == PortActive {
			return nil
		}
	}
	return fmt.Errorf("%s has no ACTIVE port", device)
}

// PortCount returns the device's number of physical ports.
func (Probe) PortCount(device string) (int, error) {
	ctx, err := Open(device)
	if err != nil {
		return 0, err
	}
	defer ctx.Close()
	attr, err := ctx.Query()
	if err != nil {
		return 0, err
	}
	return int(attr.PhysPortCount), nil
}
