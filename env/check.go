package env

import (
	"errors"
	"fmt"
	"os"
)

// Check validates what can be validated before any RDMA object is made:
// RDMABENCH_CPUS against the CPUs this process may run on, and
// RDMABENCH_SAMPLES_DIR being a directory this process can write to
// (created if missing). Each error says what to type instead.
func (c Config) Check() error {
	if err := CheckCPUs(VarCPUs, c.CPUs); err != nil {
		return err
	}
	if c.SamplesDir != "" {
		if err := checkSamplesDir(c.SamplesDir); err != nil {
			return err
		}
	}
	return nil
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
		return fmt.Errorf("%s=%s: cannot write raw samples there: %w; name a directory you can write to (e.g. %s=$PWD/out/samples) or unset it", VarSamplesDir, dir, unwrapPath(err), VarSamplesDir)
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
