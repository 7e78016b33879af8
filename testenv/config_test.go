package testenv

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	c, err := LoadFrom(env())
	require.NoError(t, err)
	assert.Equal(t, Config{
		GIDIndex: -1, Warmup: 1000, Sizes: DefaultSizes, Inline: rdmalat.InlinePerftest, Transport: spec.RC, Timeout: 5 * time.Second,
	}, c)
}

func TestLoadAll(t *testing.T) {
	c, err := LoadFrom(env(
		EnvDevice, "mlx5_1", EnvPort, "2", EnvGIDIndex, "3", EnvPeerDevice, "mlx5_0",
		EnvPeer, "nodeB:9999", EnvRequire, "1", EnvCPUs, "4,6", EnvWarmup, "0",
		EnvSizes, "2, 4K,1M", EnvInline, "0", EnvMTU, "4096", EnvTimeout, "250ms",
		EnvSamplesDir, "/tmp/s", EnvVM, "1", EnvTransport, "UD", EnvEvents, "1", EnvCM, "1",
	))
	require.NoError(t, err)
	assert.Equal(t, Config{
		Device: "mlx5_1", Port: 2, GIDIndex: 3, PeerDevice: "mlx5_0", Peer: "nodeB:9999",
		Require: true, CPUs: []int{4, 6}, Warmup: 0, Sizes: []int{2, 4096, 1 << 20},
		Inline: 0, MTU: 4096, Timeout: 250 * time.Millisecond, SamplesDir: "/tmp/s", InVM: true,
		Transport: spec.UD, Events: true, CM: true,
	}, c)
	_, err = LoadFrom(env(EnvCM, "1", EnvTransport, "uc"))
	assert.EqualError(t, err, "RDMABENCH_CM=1 with RDMABENCH_TRANSPORT=uc: rdma_cm connects RC and UD queue pairs only (perftest -R refuses UC too); unset one of them")
	c, err = LoadFrom(env(EnvInline, "device", EnvSizes, "all"))
	require.NoError(t, err)
	assert.Equal(t, rdmalat.InlineDevice, c.Inline)
	assert.True(t, c.SizesAll)
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
	c = Config{Sizes: DefaultSizes, Transport: spec.RC}
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
		{EnvPort, "x", `RDMABENCH_PORT="x": want a port number`},
		{EnvPort, "0", `RDMABENCH_PORT="0"`},
		{EnvGIDIndex, "-2", `RDMABENCH_GID_INDEX="-2": want a GID table index`},
		{EnvRequire, "yes", `RDMABENCH_REQUIRE="yes": use 1 or 0`},
		{EnvCPUs, "1,1", "pins both busy-polling threads to one CPU"},
		{EnvCPUs, "a", `"a" is not a CPU number`},
		{EnvCPUs, "1,2,3", "names 3 CPUs"},
		{EnvSizes, "0", "is not a size from 1 byte to 8M"},
		{EnvSizes, "16M", "is not a size from 1 byte to 8M"},
		{EnvMTU, "1500", "use 256, 512, 1024, 2048 or 4096"},
		{EnvTimeout, "5", "is not a positive Go duration (example: RDMABENCH_TIMEOUT=10s)"},
		{EnvTransport, "xrc", `RDMABENCH_TRANSPORT="xrc": unknown transport "xrc": want rc, uc or ud (example: RDMABENCH_TRANSPORT=ud)`},
		{EnvEvents, "on", `RDMABENCH_EVENTS="on": use 1 or 0`},
		{EnvCM, "yes", `RDMABENCH_CM="yes": use 1 or 0`},
		{EnvInline, "-1", "or device for the device's limit"},
		{EnvPeer, "nodeB:", `RDMABENCH_PEER="nodeB:" has no port; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{EnvPeer, ":18515", `RDMABENCH_PEER=":18515" has no host; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{EnvPeer, "a b", `RDMABENCH_PEER="a b" is not an address; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{EnvPeer, "nodeB:99999", `RDMABENCH_PEER="nodeB:99999" has port "99999", not a number from 1 to 65535; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`},
		{EnvWarmup, "-1", "want a count of round trips"},
	} {
		_, err := LoadFrom(env(tc.name, tc.value))
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
	} {
		c, err := LoadFrom(env(EnvPeer, in))
		require.NoError(t, err, in)
		assert.Equal(t, want, c.Peer)
	}
}

func TestSizes(t *testing.T) {
	all := AllSizes()
	assert.Len(t, all, 23) // 2^1 .. 2^23
	assert.Equal(t, 2, all[0])
	assert.Equal(t, 8<<20, all[22])
	s, err := ParseSizes("all")
	require.NoError(t, err)
	assert.Equal(t, all, s)
}

// TestNewPairPeerErrors: in two-node mode NewPair fails fast, naming the
// variable, when nothing listens at RDMABENCH_PEER or it is not an
// rdmapeer. No device is needed: the peer is reached first.
func TestNewPairPeerErrors(t *testing.T) {
	closedAddr := "127.0.0.1:1" // nothing listens there; a just-closed ephemeral port can be reused by a parallel test
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	for _, tc := range []struct {
		peer string
		is   error
		want string
	}{
		{closedAddr, nil, "RDMABENCH_PEER: cannot reach rdmapeer at " + closedAddr + " (is it running there?): connect: connection refused"},
		{silent.Addr().String(), oob.ErrNotPeer, "RDMABENCH_PEER: " + silent.Addr().String() + " is not an rdmapeer (got no answer within 300ms)"},
	} {
		c, err := LoadFrom(env(EnvPeer, tc.peer, EnvDevice, "nodev0", EnvCPUs, "none", EnvTimeout, "300ms"))
		require.NoError(t, err)
		start := time.Now()
		p, err := NewPair(c, spec.Write, 4096)
		assert.Nil(t, p)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		}
		assert.Less(t, time.Since(start), 2*time.Second)
	}
}
