package verbs

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/rdmabench/rdmabench/env"
	"go.uber.org/goleak"
)

// testConfig is the environment the device tests read (package env):
// which device, whether one is promised, whether this is the VM.
var testConfig = sync.OnceValues(env.Load)

func mustConfig(t testing.TB) env.Config {
	t.Helper()
	c, err := testConfig()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func envVM() bool { c, _ := testConfig(); return c.InVM }

// probeDevice is the cached device probe: the name of the device to test, or
// why there is none.
var probeDevice = sync.OnceValues(func() (string, error) {
	c, err := testConfig()
	if err != nil {
		return "", err
	}
	return env.ResolveDevice(Probe{}, c)
})

// mustHaveDevice returns the device to test, with env's one skip-or-fail
// rule: skip when none exists and none is promised, else fail.
func mustHaveDevice(t testing.TB) string {
	t.Helper()
	c := mustConfig(t)
	name, err := probeDevice()
	if err != nil {
		env.Unavailable(t, c.Promised(), err)
	}
	return name
}

// openDevice opens the device to test and closes it at the end of the test.
func openDevice(t testing.TB) *Context {
	t.Helper()
	return openNamed(t, mustHaveDevice(t))
}

func openNamed(t testing.TB, name string) *Context {
	t.Helper()
	ctx, err := Open(name)
	if err != nil {
		t.Fatalf("configured RDMA device cannot be used: %v", err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("closing %s: %v", name, err)
		}
	})
	return ctx
}

// mustHavePeerDevice returns a second device for cross-device tests:
// RDMABENCH_PEER_DEVICE, else another device with an active port, with
// the skip-or-fail rule of env.Config.PromisedSecond.
func mustHavePeerDevice(t testing.TB) string {
	t.Helper()
	first := mustHaveDevice(t)
	c := mustConfig(t)
	name, err := env.SecondDevice(Probe{}, c, first)
	if err != nil {
		env.Unavailable(t, c.PromisedSecond(), err)
	}
	return name
}

// TestMain fails the run when a test leaves a verbs object or a goroutine
// behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "verbs: goroutines left behind: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	for kind, n := range OpenObjects() {
		if n != 0 {
			fmt.Fprintf(os.Stderr, "verbs: leaked %d %s object(s)\n", n, kind)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}
