package testenv

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/rdmabench/rdmabench/verbs"
)

// probeDevices lists the devices once per process: the answer does not
// change during a test run, and listing is slow under emulation.
var probeDevices = sync.OnceValues(func() ([]string, error) {
	devs, err := verbs.Devices()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range devs {
		names = append(names, d.Name)
	}
	return names, nil
})

// activeDevice reports whether the device has an ACTIVE port.
func activeDevice(name string) error {
	ctx, err := verbs.Open(name)
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
		if err == nil && pa.State == verbs.PortActive {
			return nil
		}
	}
	return fmt.Errorf("%s has no ACTIVE port", name)
}

// findDevice returns the device to use: the configured one, else the first
// with an active port.
var findDevice = sync.OnceValues(func() (string, error) {
	names, err := probeDevices()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoDevice, err)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("%w: ibv_get_device_list found none (on a machine without RDMA, run the tests in the soft-RoCE VM: make test)", ErrNoDevice)
	}
	var why []string
	for _, n := range names {
		if err := activeDevice(n); err != nil {
			why = append(why, err.Error())
			continue
		}
		return n, nil
	}
	return "", fmt.Errorf("%w: none has an ACTIVE port: %s", ErrNoDevice, strings.Join(why, "; "))
})

// ErrNoDevice is the cause when no RDMA device is named and none here is
// usable.
var ErrNoDevice = errors.New("no usable RDMA device")

// HasRDMA returns nil when a usable RDMA device is present, or the reason
// there is none. It does not look at RDMABENCH_DEVICE.
func HasRDMA() error {
	_, err := findDevice()
	return err
}

// Device returns the name of the device tests should use: RDMABENCH_DEVICE
// when set (checked to exist), else the first device with an active port.
func Device(c Config) (string, error) {
	if c.Device == "" {
		return findDevice()
	}
	names, err := probeDevices()
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w", EnvDevice, c.Device, err)
	}
	if !slices.Contains(names, c.Device) {
		return "", fmt.Errorf("%s=%s: no such RDMA device (present: %v): %w", EnvDevice, c.Device, names, os.ErrNotExist)
	}
	return c.Device, nil
}

// SecondDevice returns a device other than first for cross-device tests:
// RDMABENCH_PEER_DEVICE when set, else another device with an active port.
func SecondDevice(c Config, first string) (string, error) {
	if c.PeerDevice != "" && c.PeerDevice != first {
		return c.PeerDevice, nil
	}
	names, err := probeDevices()
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if n != first && activeDevice(n) == nil {
			return n, nil
		}
	}
	return "", fmt.Errorf("no second active RDMA device besides %s (present: %v)", first, names)
}

// MustLoad returns the configuration, failing tb when a variable is
// malformed.
func MustLoad(tb TB) Config {
	tb.Helper()
	c, err := Load()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// MustHaveRDMA returns the configuration with Device filled in, after
// Check and, with RDMABENCH_PORT set, CheckPort. When no
// device can be used it skips tb, saying why, unless the environment
// promised one (RDMABENCH_REQUIRE=1, RDMABENCH_DEVICE or RDMABENCH_PEER
// set): then it fails.
func MustHaveRDMA(tb TB) Config {
	tb.Helper()
	c := MustLoad(tb)
	if err := c.Check(); err != nil {
		tb.Fatal(err)
	}
	dev, err := Device(c)
	if err != nil {
		unavailable(tb, c, err)
	}
	if c.Port != 0 {
		if err := CheckPort(dev, c.Port); err != nil {
			tb.Fatal(err) // a set variable is a promise: never a skip
		}
	}
	c.Device = dev
	return c
}

// MustHaveSecondDevice returns a second device for cross-device tests, with
// the same skip-or-fail rule as MustHaveRDMA. Inside the soft-RoCE VM
// (RDMABENCH_VM=1) a second device (rxe1) is promised.
func MustHaveSecondDevice(tb TB, c Config) string {
	tb.Helper()
	dev, err := SecondDevice(c, c.Device)
	if err != nil {
		unavailable(tb, Config{Require: c.Require && (c.InVM || c.PeerDevice != ""), Device: c.PeerDevice}, err)
	}
	return dev
}

func unavailable(tb TB, c Config, err error) {
	tb.Helper()
	if c.Require || c.Device != "" || c.Peer != "" {
		tb.Fatalf("RDMA device required (%s=1, %s or %s set) but unusable: %v", EnvRequire, EnvDevice, EnvPeer, err)
	}
	tb.Skipf("skipping: %v", err)
}
