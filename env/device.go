package env

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// A Prober answers what the device rules need to know about the RDMA
// devices here: verbs.Probe asks libibverbs, hostinfo.SysfsProbe reads
// sysfs (for tools that must not open a device).
type Prober interface {
	Devices() ([]string, error)           // the devices present, by name
	Active(device string) error           // nil when the device has an ACTIVE port, else why not
	PortCount(device string) (int, error) // how many ports it has
}

// ErrNoDevice is the cause when no RDMA device is named and none here is
// usable.
var ErrNoDevice = errors.New("no usable RDMA device")

// ErrNoPort is the cause when RDMABENCH_PORT names a port the device lacks.
var ErrNoPort = errors.New("no such port")

// FirstActive returns the default device: the first, in p's order, with an
// ACTIVE port. The error matches ErrNoDevice and says why none is usable.
func FirstActive(p Prober) (string, error) {
	names, err := p.Devices()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoDevice, err)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("%w: none found (on a machine without RDMA, run the tests in the soft-RoCE VM: make test)", ErrNoDevice)
	}
	var why []string
	for _, n := range names {
		if err := p.Active(n); err != nil {
			why = append(why, err.Error())
			continue
		}
		return n, nil
	}
	return "", fmt.Errorf("%w: none has an ACTIVE port: %s", ErrNoDevice, strings.Join(why, "; "))
}

// ResolveDevice returns the device c selects: c.Device, checked to exist,
// else FirstActive.
func ResolveDevice(p Prober, c Config) (string, error) {
	if c.Device == "" {
		return FirstActive(p)
	}
	names, err := p.Devices()
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w", VarDevice, c.Device, err)
	}
	if !slices.Contains(names, c.Device) {
		return "", fmt.Errorf("%s=%s: no such RDMA device (present: %v): %w", VarDevice, c.Device, names, os.ErrNotExist)
	}
	return c.Device, nil
}

// Usable returns the device c selects, checked to be usable: a named one
// must exist and have c.Port (when set) or an ACTIVE port; without one,
// FirstActive.
func Usable(p Prober, c Config) (string, error) {
	dev, err := ResolveDevice(p, c)
	if err != nil {
		return "", err
	}
	if c.Port != 0 {
		return dev, CheckPort(p, dev, c.Port)
	}
	if c.Device != "" {
		if err := p.Active(dev); err != nil {
			return "", fmt.Errorf("%s=%s: %w", VarDevice, dev, err)
		}
	}
	return dev, nil
}

// CheckPort fails, matching ErrNoPort, when port is not a port of dev,
// naming the ports it has: libibverbs itself says only "invalid argument".
func CheckPort(p Prober, dev string, port int) error {
	n, err := p.PortCount(dev)
	if err != nil {
		return err
	}
	return portError(dev, port, n)
}

func portError(dev string, port, count int) error {
	if port >= 1 && port <= count {
		return nil
	}
	return &portErr{fmt.Sprintf("%s=%d: %s has ports 1..%d; set %s=1 or unset it", VarPort, port, dev, count, VarPort)}
}

type portErr struct{ msg string }

func (e *portErr) Error() string        { return e.msg }
func (e *portErr) Is(target error) bool { return target == ErrNoPort }

// SecondDevice returns a device other than first for cross-device tests:
// c.PeerDevice when set, else another device with an ACTIVE port.
func SecondDevice(p Prober, c Config, first string) (string, error) {
	if c.PeerDevice != "" && c.PeerDevice != first {
		return c.PeerDevice, nil
	}
	names, err := p.Devices()
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if n != first && p.Active(n) == nil {
			return n, nil
		}
	}
	return "", fmt.Errorf("no second active RDMA device besides %s (present: %v)", first, names)
}

// Promised reports whether c promises an RDMA device (RDMABENCH_REQUIRE=1,
// or RDMABENCH_DEVICE or RDMABENCH_PEER set), so that a test finding none
// usable fails instead of skipping.
func (c Config) Promised() bool { return c.Require || c.Device != "" || c.Peer != "" }

// PromisedSecond reports whether c promises a second device for
// cross-device tests: RDMABENCH_REQUIRE=1 with RDMABENCH_PEER_DEVICE set,
// or inside the VM, which has rxe1.
func (c Config) PromisedSecond() bool { return c.Require && (c.InVM || c.PeerDevice != "") }

// TB is the part of testing.TB that Unavailable uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Unavailable is the one skip-or-fail rule of every RDMA test: it fails tb
// when promised, else skips it, saying why.
func Unavailable(tb TB, promised bool, err error) {
	tb.Helper()
	if promised {
		tb.Fatalf("RDMA device required (%s=1, %s or %s set) but unusable: %v", VarRequire, VarDevice, VarPeer, err)
	}
	tb.Skipf("skipping: %v", err)
}
