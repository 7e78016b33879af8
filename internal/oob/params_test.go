package oob_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
)

func TestParamsValidate(t *testing.T) {
	ok := oob.Params{Op: spec.Write, Transport: spec.RC, Size: 2}
	with := func(f func(p *oob.Params)) oob.Params { p := ok; f(&p); return p }
	small := oob.Limits{MaxSize: 4096, MaxRoundTrips: 10000, MaxInline: 256, MaxGIDIndex: 15, MaxIdleTimeout: time.Minute}

	for _, tc := range []struct {
		name   string
		p      oob.Params
		limits oob.Limits
		want   string // "" for valid
	}{
		{"valid", ok, oob.DefaultLimits, ""},
		{"zero limits mean defaults", with(func(p *oob.Params) { p.Size = 8 << 20 }), oob.Limits{}, ""},
		{"valid send UD", with(func(p *oob.Params) { p.Op, p.Transport, p.MTU, p.Size = spec.Send, spec.UD, 1024, 1024 }), oob.DefaultLimits, ""},
		{"valid atomic", with(func(p *oob.Params) { p.Op, p.Size = spec.FetchAdd, 8 }), oob.DefaultLimits, ""},
		{"valid edges", with(func(p *oob.Params) {
			p.Size, p.Inline, p.GIDIndex, p.IdleTimeout = 4096, 256, 15, time.Minute
		}), small, ""},
		{"zero size", with(func(p *oob.Params) { p.Size = 0 }), oob.DefaultLimits, "size 0: must be 1..8388608 bytes"},
		{"size too large", with(func(p *oob.Params) { p.Size = 4097 }), small, "size 4097: over the peer's limit of 4096 bytes"},
		{"default max size", with(func(p *oob.Params) { p.Size = 8<<20 + 1 }), oob.DefaultLimits, "size 8388609: over the peer's limit of 8388608 bytes"},
		{"inline device limit", with(func(p *oob.Params) { p.Inline = -1 }), small, ""},
		{"inline negative", with(func(p *oob.Params) { p.Inline = -3 }), small, "inline -3: must be -2 (perftest's default for the operation), -1 (the peer's device limit), 0 (never) or up to 256 bytes"},
		{"unknown op", with(func(p *oob.Params) { p.Op = 0 }), oob.DefaultLimits, "unknown op 0"},
		{"unknown op high", with(func(p *oob.Params) { p.Op = 200 }), oob.DefaultLimits, "unknown op 200"},
		{"unknown transport", with(func(p *oob.Params) { p.Transport = 4 }), oob.DefaultLimits, "unknown transport 4"},
		{"read on UC", with(func(p *oob.Params) { p.Op, p.Transport = spec.Read, spec.UC }), oob.DefaultLimits, "read over uc: UC has no RDMA READ or atomics; use rc"},
		{"write on UD", with(func(p *oob.Params) { p.Transport = spec.UD }), oob.DefaultLimits, "write over ud: UD carries sends only; use rc or uc, or op send"},
		{"rdma_cm", with(func(p *oob.Params) { p.Op, p.Transport, p.Flags = spec.Send, spec.UD, oob.FlagCM }), oob.DefaultLimits, ""},
		{"rdma_cm on UC", with(func(p *oob.Params) { p.Transport, p.Flags = spec.UC, oob.FlagCM }), oob.DefaultLimits,
			"rdma_cm over uc: librdmacm connects RC and UD queue pairs only (perftest -R refuses UC too)"},
		{"atomic size", with(func(p *oob.Params) { p.Op, p.Size = spec.CompareSwap, 2 }), oob.DefaultLimits, "size 2: atomic ops move exactly 8 bytes"},
		{"bad MTU", with(func(p *oob.Params) { p.MTU = 1500 }), oob.DefaultLimits, "mtu 1500: must be 0 (the port's active MTU), 256, 512, 1024, 2048 or 4096"},
		{"UD over MTU", with(func(p *oob.Params) { p.Op, p.Transport, p.MTU, p.Size = spec.Send, spec.UD, 1024, 1025 }), oob.DefaultLimits, "size 1025: a UD message must fit in one MTU (1024 bytes)"},
		{"inline", with(func(p *oob.Params) { p.Inline = 257 }), small, "inline 257: over the peer's limit of 256 bytes"},
		{"gid index low", with(func(p *oob.Params) { p.GIDIndex = -2 }), small, "gid index -2: must be -1 (peer's choice) or 0..15"},
		{"gid index high", with(func(p *oob.Params) { p.GIDIndex = 16 }), small, "gid index 16: must be -1 (peer's choice) or 0..15"},
		{"idle timeout negative", with(func(p *oob.Params) { p.IdleTimeout = -1 }), small, "idle timeout -1ns: must be 0 (peer's default) up to 1m0s"},
		{"idle timeout long", with(func(p *oob.Params) { p.IdleTimeout = time.Hour }), small, "idle timeout 1h0m0s: must be 0 (peer's default) up to 1m0s"},
		{"qos", with(func(p *oob.Params) { p.QoS = spec.QoS{TrafficClass: 255, FlowLabel: 1<<20 - 1, SL: 15, PKeyIndex: 9} }), oob.DefaultLimits, ""},
		{"flow label", with(func(p *oob.Params) { p.QoS.FlowLabel = 1 << 20 }), oob.DefaultLimits, "flow label 1048576: must be 0..1048575 (20 bits)"},
		{"service level", with(func(p *oob.Params) { p.QoS.SL = 16 }), oob.DefaultLimits, "service level 16: must be 0..15"},
		{"cm tclass", with(func(p *oob.Params) { p.Flags, p.QoS.TrafficClass = oob.FlagCM, 96 }), oob.DefaultLimits, ""},
		{"cm sl", with(func(p *oob.Params) { p.Flags, p.QoS.SL = oob.FlagCM, 1 }), oob.DefaultLimits,
			"rdma_cm with a flow label, service level or P_Key index: rdma_cm takes those from its route; only the traffic class applies"},
		{"device", with(func(p *oob.Params) { p.Device = "mlx5_1" }), oob.DefaultLimits, ""},
		{"device 63 bytes", with(func(p *oob.Params) { p.Device = strings.Repeat("d", 63) }), oob.DefaultLimits, ""},
		{"device too long", with(func(p *oob.Params) { p.Device = strings.Repeat("d", 64) }), oob.DefaultLimits,
			`device "` + strings.Repeat("d", 64) + `": not a device name (up to 63 printable characters, no spaces or '/'; empty for the peer's first device)`},
		{"device path", with(func(p *oob.Params) { p.Device = "../rxe0" }), oob.DefaultLimits,
			`device "../rxe0": not a device name (up to 63 printable characters, no spaces or '/'; empty for the peer's first device)`},
		{"device newline", with(func(p *oob.Params) { p.Device = "rxe0\nforged" }), oob.DefaultLimits,
			`device "rxe0\nforged": not a device name (up to 63 printable characters, no spaces or '/'; empty for the peer's first device)`},
		{"hugepages and odp", with(func(p *oob.Params) { p.Flags = oob.FlagHugePages | oob.FlagODP }), oob.DefaultLimits, ""},
		{"thp", with(func(p *oob.Params) { p.Flags = oob.FlagTHP }), oob.DefaultLimits, ""},
		{"load", with(func(p *oob.Params) { p.Flags, p.Size = oob.FlagLoad, 64<<10 }), oob.DefaultLimits, ""},
		{"load over the size limit", with(func(p *oob.Params) { p.Flags, p.Size = oob.FlagLoad, 4097 }), small, "size 4097: over the peer's limit of 4096 bytes"},
		{"load with read", with(func(p *oob.Params) { p.Flags, p.Op = oob.FlagLoad, spec.Read }), oob.DefaultLimits,
			"load stream with read over rc (flags 0x20): a load stream is RDMA WRITEs over rc, without events or rdma_cm"},
		{"load over uc", with(func(p *oob.Params) { p.Flags, p.Transport = oob.FlagLoad, spec.UC }), oob.DefaultLimits,
			"load stream with write over uc (flags 0x20): a load stream is RDMA WRITEs over rc, without events or rdma_cm"},
		{"load with rdma_cm", with(func(p *oob.Params) { p.Flags = oob.FlagLoad | oob.FlagCM }), oob.DefaultLimits,
			"load stream with write over rc (flags 0x22): a load stream is RDMA WRITEs over rc, without events or rdma_cm"},
		{"unknown flag", with(func(p *oob.Params) { p.Flags = oob.FlagLoad << 1 }), oob.DefaultLimits, "flags 0x40: unknown bits 0x40"},
		{"all at once", oob.Params{Op: 9, Transport: 9, MTU: 1}, oob.DefaultLimits,
			"unknown op 9; unknown transport 9; size 0: must be 1..8388608 bytes; mtu 1: must be 0 (the port's active MTU), 256, 512, 1024, 2048 or 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate(tc.limits)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, oob.ErrInvalidParams)
			assert.EqualError(t, err, "oob: invalid params: "+tc.want)
		})
	}
}

func TestParseAddr(t *testing.T) {
	for _, tc := range []struct{ in, want, norm string }{
		{"nodeB:18515", "", ""},
		{"192.168.77.1:1", "", ""},
		{"[fe80::1%eth0]:65535", "", ""},
		{"nodeB", "", "nodeB:18515"},
		{"192.168.77.1", "", "192.168.77.1:18515"},
		{"fe80::1", "", "[fe80::1]:18515"},
		{"[fe80::1%eth0]", "", "[fe80::1%eth0]:18515"},
		{"", `"" is not an address; want host:port, e.g. nodeB:18515`, ""},
		{"a b", `"a b" is not an address; want host:port, e.g. nodeB:18515`, ""},
		{"nodeB:1:2", `"nodeB:1:2" is not an address; want host:port, e.g. nodeB:18515`, ""},
		{":18515", `":18515" has no host; want host:port, e.g. nodeB:18515`, ""},
		{"nodeB:", `"nodeB:" has no port; want host:port, e.g. nodeB:18515`, ""},
		{"nodeB:http", `"nodeB:http" has port "http", not a number from 1 to 65535; want host:port, e.g. nodeB:18515`, ""},
		{"nodeB:0", `"nodeB:0" has port "0", not a number from 1 to 65535; want host:port, e.g. nodeB:18515`, ""},
		{"nodeB:65536", `"nodeB:65536" has port "65536", not a number from 1 to 65535; want host:port, e.g. nodeB:18515`, ""},
		{"[::1]:x", `"[::1]:x" has port "x", not a number from 1 to 65535; want host:port, e.g. [::1]:18515`, ""},
		{"a b:1", `"a b:1" has no valid host; want host:port, e.g. nodeB:18515`, ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := oob.ParseAddr(tc.in)
			if tc.want == "" {
				require.NoError(t, err)
				if tc.norm == "" {
					tc.norm = tc.in
				}
				assert.Equal(t, tc.norm, got)
				return
			}
			require.ErrorIs(t, err, oob.ErrAddr)
			assert.EqualError(t, err, "peer address "+tc.want)
		})
	}
}

func TestParseVar(t *testing.T) {
	addr, err := oob.ParseVar(env.VarPeer, "")
	require.NoError(t, err)
	assert.Empty(t, addr)

	_, err = oob.ParseVar(env.VarPeer, "nodeB:")
	require.ErrorIs(t, err, oob.ErrAddr)
	assert.EqualError(t, err, `RDMABENCH_PEER="nodeB:" has no port; want host:port, e.g. RDMABENCH_PEER=nodeB:18515`)

	addr, err = oob.ParseVar(env.VarPeer, " nodeB ")
	require.NoError(t, err)
	assert.Equal(t, "nodeB:18515", addr, "a bare host gets the default port")

	addr, err = oob.ParseVar(env.VarPeer, "nodeB:18515")
	require.NoError(t, err)
	assert.Equal(t, "nodeB:18515", addr)
}
