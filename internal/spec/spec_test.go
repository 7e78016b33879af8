package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpNamesRoundTrip(t *testing.T) {
	for _, o := range Ops {
		require.True(t, o.Valid())
		got, err := ParseOp(o.String())
		require.NoError(t, err)
		assert.Equal(t, o, got)
		assert.NotEmpty(t, o.Perftest())
	}
	_, err := ParseOp("writ")
	assert.ErrorContains(t, err, "want one of write, write_imm, read, send, send_imm, fetch_add, compare_swap")
	assert.False(t, Op(0).Valid())
	assert.Equal(t, "Op(9)", Op(9).String())
}

// perftest halves the ping-pong tests and reports read and atomics whole.
func TestHalved(t *testing.T) {
	halved := map[Op]bool{Write: true, WriteImm: true, Send: true, SendImm: true, Read: false, FetchAdd: false, CompareSwap: false}
	for o, want := range halved {
		assert.Equal(t, want, o.Halved(), "%v", o)
		assert.Equal(t, !want, o.OneSided(), "%v", o)
	}
	assert.False(t, Write.Events(), "perftest refuses -e for plain write")
	assert.True(t, Read.Events())
}

func TestCarries(t *testing.T) {
	for _, tc := range []struct {
		t    Transport
		o    Op
		want string
	}{
		{RC, Write, ""}, {RC, Read, ""}, {RC, FetchAdd, ""}, {UC, Write, ""}, {UC, Send, ""}, {UC, WriteImm, ""},
		{UD, Send, ""}, {UD, SendImm, ""},
		{UC, Read, "UC has no RDMA READ"}, {UC, CompareSwap, "UC has no RDMA READ or atomics"},
		{UD, Write, "UD carries sends only"}, {UD, Read, "UD carries sends only"},
		{Transport(7), Write, "unknown transport"}, {RC, Op(0), "unknown operation"},
	} {
		err := tc.t.Carries(tc.o)
		if tc.want == "" {
			assert.NoError(t, err, "%v over %v", tc.o, tc.t)
		} else {
			assert.ErrorContains(t, err, tc.want, "%v over %v", tc.o, tc.t)
		}
	}
}

func TestCheckSize(t *testing.T) {
	assert.NoError(t, CheckSize(FetchAdd, RC, 8, 1024))
	assert.ErrorContains(t, CheckSize(FetchAdd, RC, 64, 1024), "exactly 8 bytes")
	assert.NoError(t, CheckSize(Send, UD, 1024, 1024))
	assert.ErrorContains(t, CheckSize(Send, UD, 2048, 1024), "fit in one MTU (1024 bytes)")
	assert.NoError(t, CheckSize(Send, RC, 1<<20, 1024))
	assert.ErrorContains(t, CheckSize(Write, RC, 0, 0), "at least 1 byte")
}

func TestParseTransport(t *testing.T) {
	for _, tr := range Transports {
		got, err := ParseTransport(tr.String())
		require.NoError(t, err)
		assert.Equal(t, tr, got)
	}
	got, err := ParseTransport("UD")
	require.NoError(t, err)
	assert.Equal(t, UD, got)
	_, err = ParseTransport("xrc")
	assert.ErrorContains(t, err, "want rc, uc or ud")
}
