// Package testenv is what rdmabench's tests and benchmarks call to find
// their RDMA environment: HasRDMA / MustHaveRDMA, MustHaveSecondDevice and
// MustPair, built on package env, which reads the RDMABENCH_ variables
// (docs/variables.md lists them).
//
// Every RDMA test follows one rule (env.Unavailable): it skips, saying
// why, when no device is usable and none is promised; it fails when the
// environment promised one (RDMABENCH_REQUIRE=1, as in the VM, or
// RDMABENCH_DEVICE or RDMABENCH_PEER set). Only tests import this
// package; commands use env.
package testenv

import (
	"sync"
	"testing"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/verbs"
)

// defaultDevice is the device chosen when none is named, probed once per
// process: the answer does not change during a test run.
var defaultDevice = sync.OnceValues(func() (string, error) { return env.FirstActive(verbs.Probe{}) })

// HasRDMA returns nil when a usable RDMA device is present, or the reason
// there is none (matching env.ErrNoDevice). It does not look at
// RDMABENCH_DEVICE.
func HasRDMA() error {
	_, err := defaultDevice()
	return err
}

// MustLoad returns the configuration, failing tb when a variable is
// malformed.
func MustLoad(tb testing.TB) env.Config {
	tb.Helper()
	c, err := env.Load()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// MustHaveRDMA returns the configuration with Device filled in, after
// Check and, with RDMABENCH_PORT set, env.CheckPort. When no device can
// be used it skips or fails tb by env.Unavailable's rule.
func MustHaveRDMA(tb testing.TB) env.Config {
	tb.Helper()
	c := MustLoad(tb)
	if err := c.Check(); err != nil {
		tb.Fatal(err)
	}
	var dev string
	var err error
	if c.Device == "" {
		dev, err = defaultDevice()
	} else {
		dev, err = env.ResolveDevice(verbs.Probe{}, c)
	}
	if err != nil {
		env.Unavailable(tb, c.Promised(), err)
	}
	if c.Port != 0 {
		if err := env.CheckPort(verbs.Probe{}, dev, c.Port); err != nil {
			tb.Fatal(err) // a set variable is a promise: never a skip
		}
	}
	c.Device = dev
	return c
}

// MustHaveSecondDevice returns a second device for cross-device tests, by
// env.SecondDevice, skipping or failing tb by env.Unavailable's rule with
// env.Config.PromisedSecond (inside the VM, rxe1 is promised).
func MustHaveSecondDevice(tb testing.TB, c env.Config) string {
	tb.Helper()
	dev, err := env.SecondDevice(verbs.Probe{}, c, c.Device)
	if err != nil {
		env.Unavailable(tb, c.PromisedSecond(), err)
	}
	return dev
}
