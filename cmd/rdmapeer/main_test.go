package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/envtest"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/peer"
)

func TestFlagsDefaults(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseFlags(nil, envtest.Getenv(), &stderr)
	require.NoError(t, err)
	assert.Equal(t, ":18515", o.listen)
	assert.Nil(t, o.devices, "none: the first device with an active port")
	assert.Equal(t, -1, o.gidIndex)
	assert.Len(t, o.cpus, 1, "the last allowed CPU")
	assert.Equal(t, 4, o.maxSessions)
	assert.Equal(t, int64(64<<20), o.maxMemory)
	assert.Equal(t, int64(8<<20), o.maxSize)
	assert.Equal(t, oob.DefaultLimits.MaxRoundTrips, o.maxRoundTrips)
	assert.Equal(t, 5*time.Second, o.timeout)
	assert.Equal(t, 10*time.Minute, o.idle)
	assert.Equal(t, 5*time.Second, o.handshake)
	assert.Equal(t, 30*time.Second, o.maxTimeout, "a client keeps a CPU busy-polling for at most 30 s")
	assert.Equal(t, 2, o.maxPerClient)
	assert.Empty(t, o.token)
	assert.Nil(t, o.allow)
}

func TestFlagsTokenAllow(t *testing.T) {
	o, err := parseFlags([]string{"-allow", "10.0.0.0/24,192.168.77.2", "-max-per-client", "1"}, envtest.Getenv(env.VarPeerToken, "from-env"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "from-env", o.token)
	assert.Equal(t, "10.0.0.0/24,192.168.77.2/32", allowText(o.allow))
	assert.Equal(t, 1, o.maxPerClient)
	o, err = parseFlags([]string{"-token", "from-flag"}, envtest.Getenv(env.VarPeerToken, "from-env"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "from-flag", o.token)
}

func TestFlagsEnvAndFlags(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	two := allowed[max(0, len(allowed)-2):] // -cpu names CPUs this process may use
	vars := envtest.Getenv("RDMABENCH_DEVICE", "rxe1", "RDMABENCH_PORT", "2", "RDMABENCH_GID_INDEX", "3", "RDMABENCH_TIMEOUT", "2s")
	o, err := parseFlags(nil, vars, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"rxe1"}, o.devices)
	assert.Equal(t, 2, o.port)
	assert.Equal(t, 3, o.gidIndex)
	assert.Equal(t, 2*time.Second, o.timeout)

	o, err = parseFlags([]string{"-device", "mlx5_0", "-gid-index", "-1", "-listen", "192.168.1.2:9999", "-cpu", strings.ReplaceAll(env.FormatCPUList(two), ",", ", "),
		"-max-sessions", "1", "-max-memory", "1G", "-max-size", "64K", "-max-round-trips", "1000", "-idle", "none"}, vars, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx5_0"}, o.devices)
	assert.Equal(t, -1, o.gidIndex)
	assert.Equal(t, "192.168.1.2:9999", o.listen)
	assert.Equal(t, two, o.cpus)
	assert.Equal(t, 1, o.maxSessions)
	assert.Equal(t, int64(1<<30), o.maxMemory)
	assert.Equal(t, int64(64<<10), o.maxSize)
	assert.Equal(t, uint64(1000), o.maxRoundTrips)
	assert.Equal(t, peer.NoIdleLimit, o.idle)

	o, err = parseFlags([]string{"-cpu", "none"}, vars, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Nil(t, o.cpus)

	// RDMABENCH_GID_INDEX=0 is the entry at index 0, which -gid-index
	// shows as the number typed.
	o, err = parseFlags(nil, envtest.Getenv("RDMABENCH_GID_INDEX", "0"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 0, o.gidIndex)
}

func TestFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"-size", "64"}, nil, "flag provided but not defined: -size"},
		{[]string{"64"}, nil, `rdmapeer takes no arguments, only flags (got ["64"]): benchmark options come from the client`},
		{[]string{"-listen", "nodeB"}, nil, `-listen "nodeB": want host:port or :port (example: -listen 192.168.1.2:18515)`},
		{[]string{"-max-sessions", "0"}, nil, "-max-sessions 0: want at least 1"},
		{[]string{"-max-memory", "lots"}, nil, `-max-memory "lots": want a byte count such as 65536, 64K or 8M`},
		{[]string{"-max-size", "0"}, nil, `-max-size "0": want a byte count`},
		{[]string{"-max-size", "64M"}, nil, "-max-size 64M needs 134217728 bytes registered per session, over -max-memory 64M"},
		{[]string{"-max-round-trips", "0"}, nil, "-max-round-trips 0: want at least 1"},
		{[]string{"-cpu", "x"}, nil, `-cpu "x": not a CPU list: "x": "x" is not a CPU number (each session answers on a CPU of its own; example: -cpu 3, -cpu 2,3, -cpu 2-5 or -cpu none)`},
		{[]string{"-cpu", "1,1"}, nil, `-cpu "1,1": not a CPU list: a CPU named twice (CPU 1) (each session answers on a CPU of its own; example: -cpu 3, -cpu 2,3, -cpu 2-5 or -cpu none)`},
		{[]string{"-cpu", "999"}, nil, "-cpu=999: this process may run on CPUs "},
		{[]string{"-cpu", "9999"}, nil, `-cpu "9999": not a CPU list: "9999": CPU 9999 is above 8191, the most a kernel has`},
		{nil, []string{"RDMABENCH_GID_INDEX", "x"}, `RDMABENCH_GID_INDEX="x": want a GID table index`},
		{[]string{"-allow", "nodeA"}, nil, `-allow "nodeA": "nodeA" is neither an address nor a CIDR prefix (example: -allow 10.0.0.0/24,192.168.77.2)`},
		{[]string{"-max-per-client", "0"}, nil, "-max-per-client 0: want at least 1"},
		// -allow given but empty never means any address.
		{[]string{"-allow", ""}, nil, `-allow "": no prefix; leave -allow out to serve any address`},
		{[]string{"-allow", " "}, nil, `-allow " ": no prefix; leave -allow out to serve any address`},
		{[]string{"-allow", "fe80::1%eth0"}, nil, "write fe80::1"},
		// The default loop timeout is never over what a client may ask for.
		{[]string{"-timeout", "10m", "-max-timeout", "30s"}, nil, "-timeout 10m0s is over -max-timeout 30s, the longest RDMA loop timeout a client may ask for: give -timeout 30s or less, or raise -max-timeout"},
		{nil, []string{"RDMABENCH_TIMEOUT", "5m"}, "RDMABENCH_TIMEOUT=5m (rdmapeer's -timeout) is over -max-timeout 30s"},
		{[]string{"-max-timeout", "2s"}, nil, "-timeout 5s (the default) is over -max-timeout 2s, the longest RDMA loop timeout a client may ask for: give -timeout 2s or less"},
	} {
		_, err := parseFlags(tc.args, envtest.Getenv(tc.env...), &bytes.Buffer{})
		if assert.Error(t, err, "%q %q", tc.args, tc.env) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
}

// TestTokenNeverPrinted: the usage (-h, or a bad flag) never shows the
// token, from the variable or the flag.
func TestTokenNeverPrinted(t *testing.T) {
	const secret = "s3cr3t-tok"
	for _, args := range [][]string{{"-h"}, {"-lisen", ":1"}, {"-token", secret, "-h"}, {"-token", secret, "-lisen", ":1"}} {
		var stdout, stderr bytes.Buffer
		run(t.Context(), args, envtest.Getenv(env.VarPeerToken, secret), &stdout, &stderr)
		assert.Contains(t, stderr.String(), "-token secret", "%q", args)
		assert.NotContains(t, stderr.String()+stdout.String(), secret, "%q", args)
	}
}

func TestRunUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run(t.Context(), []string{"-h"}, envtest.Getenv(), &stdout, &stderr))
	assert.Contains(t, stderr.String(), "usage: rdmapeer [flags]")
	assert.Contains(t, stderr.String(), "-max-sessions")
	assert.Equal(t, 2, run(t.Context(), []string{"extra"}, envtest.Getenv(), &stdout, &stderr))
	assert.Empty(t, stdout.String())
}

// TestRunBadDevice: a device that cannot be used fails at start, before
// listening, saying which.
func TestRunBadDevice(t *testing.T) {
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	assert.Equal(t, 1, run(ctx, []string{"-device", "notexist0", "-listen", "127.0.0.1:0"}, envtest.Getenv(), &stdout, &stderr))
	assert.Empty(t, stdout.String(), "nothing listens")
	assert.True(t, strings.HasPrefix(stderr.String(), "rdmapeer: "), stderr.String())
	assert.Contains(t, stderr.String(), "device notexist0: ")
	t.Log(stderr.String())
}

// TestFlagsDevices: -device and RDMABENCH_DEVICE take a node's rails, a
// list or all; a bad list is refused with what to type.
func TestFlagsDevices(t *testing.T) {
	o, err := parseFlags(nil, envtest.Getenv(env.VarDevice, "mlx5_0, mlx5_1"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx5_0", "mlx5_1"}, o.devices, "RDMABENCH_DEVICE's rails, in order")
	o, err = parseFlags([]string{"-device", "all"}, envtest.Getenv(env.VarDevice, "mlx5_0"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"all"}, o.devices)
	for arg, want := range map[string]string{
		"mlx5_0,,mlx5_1": `-device "mlx5_0,,mlx5_1": "" is not a device name; write one device, several separated by commas (-device mlx5_0,mlx5_1), or all`,
		"mlx5_0,all":     `-device "mlx5_0,all": "all" is not a device name; write one device, several separated by commas (-device mlx5_0,mlx5_1), or all`,
		"rxe0,rxe0":      `-device "rxe0,rxe0": rxe0 is named twice; name each device once`,
	} {
		_, err := parseFlags([]string{"-device", arg}, envtest.Getenv(), &bytes.Buffer{})
		assert.EqualError(t, err, want)
	}

	p := fakeProbe{names: []string{"mlx5_0", "mlx5_1", "mlx5_2"}, down: map[string]bool{"mlx5_1": true}}
	got, err := resolveDevices([]string{"all"}, p)
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx5_0", "mlx5_2"}, got, "all: those with an active port")
	got, err = resolveDevices(nil, p)
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx5_0"}, got)
	_, err = resolveDevices([]string{"all"}, fakeProbe{names: []string{"mlx5_1"}, down: map[string]bool{"mlx5_1": true}})
	assert.ErrorIs(t, err, env.ErrNoDevice)
	assert.ErrorContains(t, err, "-device all: no device has an active port (present: [mlx5_1])")
}

// fakeProbe is a host's devices, some without an active port.
type fakeProbe struct {
	names []string
	down  map[string]bool
}

func (p fakeProbe) Devices() ([]string, error) { return p.names, nil }
func (p fakeProbe) Active(d string) error {
	if p.down[d] {
		return errors.New(d + ": port 1 DOWN")
	}
	return nil
}
func (p fakeProbe) PortCount(string) (int, error) { return 1, nil }
