package verbs

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// Environment the device tests read:
//
//	RDMABENCH_DEVICE       the device to test; if it cannot be opened, tests fail
//	RDMABENCH_PEER_DEVICE  the second device for cross-device tests
//	RDMABENCH_REQUIRE=1    fail instead of skipping when there is no device
//	RDMABENCH_VM=1         running in the rxevm soft-RoCE guest (rxe0, rxe1)
func envRequire() bool { return os.Getenv("RDMABENCH_REQUIRE") == "1" }
func envVM() bool      { return os.Getenv("RDMABENCH_VM") == "1" }

// probeDevice is the cached device probe: the name of the device to test, or
// why there is none.
var probeDevice = sync.OnceValues(func() (string, error) {
	if name := os.Getenv("RDMABENCH_DEVICE"); name != "" {
		return name, nil
	}
	devs, err := Devices()
	if err != nil {
		return "", err
	}
	if len(devs) == 0 {
		return "", fmt.Errorf("ibv_get_device_list found no devices")
	}
	return devs[0].Name, nil
})

// mustHaveDevice returns the device to test, skipping when none exists and
// none is configured, and failing when one is configured or required.
func mustHaveDevice(t testing.TB) string {
	t.Helper()
	name, err := probeDevice()
	if err != nil {
		if envRequire() {
			t.Fatalf("RDMABENCH_REQUIRE=1 but no RDMA device: %v", err)
		}
		t.Skipf("skipping: no RDMA device: %v", err)
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
// RDMABENCH_PEER_DEVICE, else another device with an active port 1. It
// skips when there is none, unless RDMABENCH_PEER_DEVICE or RDMABENCH_VM
// promises one.
func mustHavePeerDevice(t testing.TB) string {
	t.Helper()
	first := mustHaveDevice(t)
	if name := os.Getenv("RDMABENCH_PEER_DEVICE"); name != "" {
		return name
	}
	devs, err := Devices()
	if err != nil {
		t.Fatalf("listing devices: %v", err)
	}
	for _, d := range devs {
		if d.Name == first {
			continue
		}
		ctx, err := Open(d.Name)
		if err != nil {
			continue
		}
		pa, err := ctx.QueryPort(1)
		ctx.Close()
		if err == nil && pa.State == PortActive {
			return d.Name
		}
	}
	if envVM() {
		t.Fatalf("RDMABENCH_VM=1 but no second active device besides %s among %v", first, devs)
	}
	t.Skipf("skipping: no second RDMA device besides %s", first)
	return ""
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
