package testenv

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/hostinfo"
	"github.com/rdmabench/rdmabench/verbs"
)

// Check validates what can be validated before any RDMA object is made:
// RDMABENCH_CPUS against the CPUs this process may run on, and
// RDMABENCH_SAMPLES_DIR being a directory this process can write to
// (created if missing). Each error says what to type instead.
func (c Config) Check() error {
	if len(c.CPUs) > 0 {
		allowed, err := hostinfo.AllowedCPUs()
		if err != nil {
			return fmt.Errorf("%s=%s: %w", EnvCPUs, joinInts(c.CPUs), err)
		}
		if err := checkCPUs(c.CPUs, allowed); err != nil {
			return err
		}
	}
	if c.SamplesDir != "" {
		if err := checkSamplesDir(c.SamplesDir); err != nil {
			return err
		}
	}
	return nil
}

// checkCPUs fails when a CPU in cpus is not among those this process may
// run on, suggesting the default choice (the last two allowed).
func checkCPUs(cpus, allowed []int) error {
	var bad []int
	for _, n := range cpus {
		if !slices.Contains(allowed, n) {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	example := allowed[max(0, len(allowed)-len(cpus)):]
	return fmt.Errorf("%s=%s: this process may run on CPUs %s; e.g. %s=%s or none", EnvCPUs, joinInts(cpus), hostinfo.FormatCPUList(allowed), EnvCPUs, joinInts(example))
}

// checkSamplesDir makes dir if missing and writes and removes a file in it.
func checkSamplesDir(dir string) error {
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(dir, ".rdmabench-check-*"); err == nil {
			f.Close()
			err = os.Remove(f.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("%s=%s: cannot write raw samples there: %w; name a directory you can write to (e.g. %s=$PWD/out/samples) or unset it", EnvSamplesDir, dir, unwrapPath(err), EnvSamplesDir)
	}
	return nil
}

// unwrapPath drops the *PathError's own copy of the path, which the
// message already names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// CheckPort fails when port is not a port of device dev, naming the ports
// it has: libibverbs itself says only "invalid argument".
func CheckPort(dev string, port int) error {
	ctx, err := verbs.Open(dev)
	if err != nil {
		return err
	}
	defer ctx.Close()
	attr, err := ctx.Query()
	if err != nil {
		return err
	}
	return portError(dev, port, int(attr.PhysPortCount))
}

// portError is CheckPort's message for a device with count ports.
func portError(dev string, port, count int) error {
	if port >= 1 && port <= count {
		return nil
	}
	return &portErr{fmt.Sprintf("%s=%d: %s has ports 1..%d; set %s=1 or unset it", EnvPort, port, dev, count, EnvPort)}
}

// ErrNoPort is the cause when RDMABENCH_PORT names a port the device lacks.
var ErrNoPort = errors.New("no such port")

type portErr struct{ msg string }

func (e *portErr) Error() string        { return e.msg }
func (e *portErr) Is(target error) bool { return target == ErrNoPort }

// Usable returns the device the configuration selects, checked to be
// usable: the configured one must exist and have RDMABENCH_PORT (when
// set) or an ACTIVE port; without one, the first device with an ACTIVE
// port.
func Usable(c Config) (string, error) {
	dev, err := Device(c)
	if err != nil {
		return "", err
	}
	if c.Port != 0 {
		return dev, CheckPort(dev, c.Port)
	}
	if c.Device != "" {
		if err := activeDevice(dev); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvDevice, dev, err)
		}
	}
	return dev, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
