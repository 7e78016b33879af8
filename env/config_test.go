package env

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/envtest"
	"github.com/rdmabench/rdmabench/internal/spec"
)

func TestLoadDefaults(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv())
	require.NoError(t, err)
	assert.Equal(t, Config{
		GIDIndex: -1, Warmup: 1000, Sizes: defaultSizes, Inline: InlinePerftest, Transport: spec.RC, Timeout: 5 * time.Second,
		MaxSamples: defaultMaxSamples,
	}, c)
}

func TestLoadAll(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(
		VarDevice, "mlx5_1", VarPort, "2", VarGIDIndex, "3", VarPeerDevice, "mlx5_0",
		VarPeer, "nodeB:9999", VarRequire, "1", VarCPUs, "4,6", VarWarmup, "0",
		VarSizes, "2, 4K,1M", VarInline, "0", VarMTU, "4096", VarTimeout, "250ms",
		VarSamplesDir, "/tmp/s", VarMaxSamples, "0", VarVM, "1", VarTransport, "UD", VarEvents, "1", VarCM, "1",
	))
	require.NoError(t, err)
	assert.Equal(t, Config{
		Device: "mlx5_1", Port: 2, GIDIndex: 3, PeerDevice: "mlx5_0", Peer: "nodeB:9999",
		Require: true, CPUs: []int{4, 6}, Warmup: 0, Sizes: []int{2, 4096, 1 << 20},
		Inline: 0, MTU: 4096, Timeout: 250 * time.Millisecond, SamplesDir: "/tmp/s", InVM: true,
		Transport: spec.UD, Events: true, CM: true,
	}, c)
	_, err = LoadFrom(envtest.Getenv(VarCM, "1", VarTransport, "uc"))
	assert.EqualError(t, err, "RDMABENCH_CM=1 with RDMABENCH_TRANSPORT=uc: rdma_cm connects RC and UD queue pairs only (perftest -R refuses UC too); unset one of them")
	c, err = LoadFrom(envtest.Getenv(VarInline, "device", VarSizes, "all"))
	require.NoError(t, err)
	assert.Equal(t, InlineDevice, c.Inline)
	assert.True(t, c.SizesAll)
}

func TestLoadMaxSamples(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(VarMaxSamples, "250"))
	require.NoError(t, err)
	assert.Equal(t, int64(250), c.MaxSamples)
	for _, bad := range []string{"-1", "1e6", "lots"} {
		_, err = LoadFrom(envtest.Getenv(VarMaxSamples, bad))
		assert.EqualError(t, err, "RDMABENCH_MAX_SAMPLES=\""+bad+"\": want a count of samples, e.g. RDMABENCH_MAX_SAMPLES=10000000 (0: write none)", bad)
	}
}

func TestSizesFor(t *testing.T) {
	c := Config{Sizes: []int{2, 1024, 4096}, Transport: spec.UD}
	_, _, err := c.SizesFor(spec.Send, 1024)
	assert.ErrorContains(t, err, "RDMABENCH_SIZES: size 4096: a UD message must fit in one MTU (1024 bytes)")
	c.SizesAll = true
	sizes, notes, err := c.SizesFor(spec.Send, 1024)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1024}, sizes, "all: sizes above the MTU are left out, as perftest -a caps them")
	assert.Len(t, notes, 1)
	c = Config{Sizes: defaultSizes, Transport: spec.RC}
	sizes, notes, err = c.SizesFor(spec.FetchAdd, 0)
	require.NoError(t, err)
	assert.Equal(t, []int{8}, sizes)
	assert.Empty(t, notes)
	c.Sizes = []int{64}
	sizes, notes, _ = c.SizesFor(spec.CompareSwap, 0)
	assert.Equal(t, []int{8}, sizes)
	assert.Equal(t, []string{"RDMABENCH_SIZES: compare_swap runs at 8 bytes only"}, notes)
	sizes, _, _ = c.SizesFor(spec.Write, 0)
	assert.Equal(t, []int{64}, sizes)
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
	}{
		{VarPort, "x", `RDMABENCH_PORT="x": want a port number`},
		{VarPort, "0", `RDMABENCH_PORT="0"`},
		{VarGIDIndex, "-2", `RDMABENCH_GID_INDEX="-2": want a GID table index`},
		{VarRequire, "yes", `RDMABENCH_REQUIRE="yes": use 1 or 0`},
		{VarCPUs, "1,1", "pins both busy-polling threads to one CPU"},
		{VarCPUs, "a", `"a" is not a CPU number`},
		{VarCPUs, "1,2,3", "names 3 CPUs"},
		{VarSizes, "0", "is not a size from 1 byte to 8M"},
		{VarSizes, "16M", "is not a size from 1 byte to 8M"},
		{VarMTU, "1500", "use 256, 512, 1024, 2048 or 4096"},
		{VarTimeout, "5", "is not a positive Go duration (example: RDMABENCH_TIMEOUT=10s)"},
		{VarTransport, "xrc", `RDMABENCH_TRANSPORT="xrc": unknown transport "xrc": want rc, uc or ud (example: RDMABENCH_TRANSPORT=ud)`},
		{VarEvents, "on", `RDMABENCH_EVENTS="on": use 1 or 0`},
		{VarCM, "yes", `RDMABENCH_CM="yes": use 1 or 0`},
		{VarInline, "-1", "or device for the device's limit"},
		{VarPeer, "nodeB:", `RDMABENCH_PEER="nodeB:" has no port; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{VarPeer, ":18515", `RDMABENCH_PEER=":18515" has no host; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{VarPeer, "a b", `RDMABENCH_PEER="a b" is not an address; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{VarPeer, "nodeB:99999", `RDMABENCH_PEER="nodeB:99999" has port "99999", not a number from 1 to 65535; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{VarWarmup, "-1", "want a count of round trips"},
		// Refused at load, not where they are used.
		{VarVM, "yes", `RDMABENCH_VM="yes": use 1 or 0`},
		{VarVM, "2", `RDMABENCH_VM="2": use 1 or 0`},
		{VarPMQoS, "1h", `RDMABENCH_PMQOS="1h": the kernel takes a limit in whole microseconds up to 35m47.483647s`},
		{VarPMQoS, "1500ns", "in whole microseconds"},
		{VarTimeout, "1ns", `RDMABENCH_TIMEOUT="1ns" is under 10ms: it bounds every wait on the peer`},
		{VarSizes, "64,64", `RDMABENCH_SIZES="64,64" names 64 bytes twice; list each size once`},
		{VarSizes, "1K,1024", "names 1024 bytes twice"},
		{VarPeer, "[::1", `RDMABENCH_PEER="[::1" is not an address (unbalanced brackets); want host:port, e.g. RDMABENCH_PEER=[::1]:18515`},
		{VarPeer, "::1]", `RDMABENCH_PEER="::1]" is not an address`},
		{VarPeer, "[::1]]:5", `RDMABENCH_PEER="[::1]]:5"`},
	} {
		_, err := LoadFrom(envtest.Getenv(tc.name, tc.value))
		if assert.Error(t, err, "%s=%s", tc.name, tc.value) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
}

func TestLoadPeer(t *testing.T) {
	for in, want := range map[string]string{
		"nodeB:18515":      "nodeB:18515",
		"nodeB":            "nodeB:18515",
		"10.0.0.2":         "10.0.0.2:18515",
		"fe80::1":          "[fe80::1]:18515",
		"[fe80::1%eth0]:7": "[fe80::1%eth0]:7",
		"[::1]":            "[::1]:18515",
	} {
		c, err := LoadFrom(envtest.Getenv(VarPeer, in))
		require.NoError(t, err, in)
		assert.Equal(t, want, c.Peer)
	}
}

func TestSizes(t *testing.T) {
	all := allSizes()
	assert.Len(t, all, 23) // 2^1 .. 2^23
	assert.Equal(t, 2, all[0])
	assert.Equal(t, 8<<20, all[22])
	s, err := ParseSizes(VarSizes, "all")
	require.NoError(t, err)
	assert.Equal(t, all, s)
}

func TestLoadPMQoS(t *testing.T) {
	for v, want := range map[string]Config{
		"":     {},
		"0":    {},
		"1":    {PMQoS: true},
		"0s":   {PMQoS: true},
		"20us": {PMQoS: true, PMQoSLimit: 20 * time.Microsecond},
	} {
		c, err := LoadFrom(envtest.Getenv(VarPMQoS, v))
		require.NoError(t, err, v)
		assert.Equal(t, want.PMQoS, c.PMQoS, v)
		assert.Equal(t, want.PMQoSLimit, c.PMQoSLimit, v)
	}
	for v, want := range map[string]bool{"true": true, "1": true, "0": false, "false": false} {
		c, err := LoadFrom(envtest.Getenv(VarVM, v))
		require.NoError(t, err, v)
		assert.Equal(t, want, c.InVM, "RDMABENCH_VM=%s", v)
	}
	_, err := LoadFrom(envtest.Getenv(VarPMQoS, "yes"))
	assert.EqualError(t, err, `RDMABENCH_PMQOS="yes": want 1 (hold the CPU wake-up latency limit at 0), a limit such as 20us, or 0 (off)`)
}

func TestParseBytes(t *testing.T) {
	for v, want := range map[string]int64{"65536": 65536, "64K": 64 << 10, "8m": 8 << 20, " 1G ": 1 << 30} {
		n, err := ParseBytes("-max-size", v, 1<<40)
		require.NoError(t, err, v)
		assert.Equal(t, want, n, v)
	}
	for _, v := range []string{"0", "x", "2G", "-1", "K"} {
		_, err := ParseBytes("-max-size", v, 1<<30)
		assert.EqualError(t, err, `-max-size "`+v+`": want a byte count such as 65536, 64K or 8M`)
	}
	sizes, err := ParseSizes("-sizes", "2,64k,8M")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 64 << 10, 8 << 20}, sizes)
	_, err = ParseSizes("-sizes", "1G")
	assert.EqualError(t, err, `-sizes="1G": "1G" is not a size from 1 byte to 8M (example: -sizes=2,4096,64K or -sizes=all)`)
}
