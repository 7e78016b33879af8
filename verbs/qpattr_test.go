package verbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueryQPPath checks that the path a connected QP is given at INIT and
// RTR (service level, traffic class, flow label, P_Key index) is the one
// the device keeps: ibv_query_qp reads it back. rxe keeps the GRH fields
// but no service level (its address vector has none: it reads back 0), and
// its P_Key table has one entry, so only index 0 is there to set; those two
// are covered by TestQPAttrRoundTrip.
func TestQueryQPPath(t *testing.T) {
	ctx := openDevice(t)
	for _, typ := range []QPType{RC, UC} {
		t.Run(typ.String(), func(t *testing.T) {
			a, b := newSide(t, ctx, typ), newSide(t, ctx, typ)
			const sl, tclass, flow = 5, 0x68, 0x4d2c1
			require.NoError(t, a.qp.ToInit(InitAttr{Port: a.port, Access: AccessAll}))
			require.NoError(t, a.qp.ToRTR(RTRAttr{
				DestQPN: b.qp.Num(), RQPSN: 1, DGID: b.gid.Raw, GIDIndex: a.gid.Index,
				SL: sl, TrafficClass: tclass, FlowLabel: flow,
			}))
			got, err := a.qp.Query()
			require.NoError(t, err)
			assert.Equal(t, QPRTR, got.State)
			assert.Equal(t, b.qp.Num(), got.DestQPN)
			assert.Equal(t, uint16(0), got.PKeyIndex)
			assert.True(t, got.IsGlobal, "a DGID makes a GRH")
			assert.Equal(t, b.gid.Raw, got.DGID)
			assert.Equal(t, uint8(tclass), got.TrafficClass)
			assert.Equal(t, uint32(flow), got.FlowLabel)
			assert.Equal(t, uint8(64), got.HopLimit)
		})
	}
}

// TestQueryQPClosed: a closed QP is refused, not read.
func TestQueryQPClosed(t *testing.T) {
	var qp QP
	_, err := qp.Query()
	require.Error(t, err)
}

// TestQPAttrRoundTrip checks the attributes handed to libibverbs where
// rxe cannot show them (it keeps no service level, and its P_Key table
// has one entry): ToInit's P_Key index and ToRTR's and CreateAH's address
// vector are written into the C structs and read back as ibv_query_qp
// would report them. Runs on the host (cgo), no device needed.
func TestQPAttrRoundTrip(t *testing.T) {
	if !haveCgo {
		t.Skip("skipping test: the C structs need cgo")
	}
	dgid := [16]byte{0xfe, 0x80, 15: 7}
	for _, typ := range []QPType{RC, UC} {
		qp := &QP{typ: typ, port: 2}
		m := qp.initModify(InitAttr{Port: 2, PKeyIndex: 5, Access: AccessAll})
		got := qpAttrRoundTrip(&m)
		assert.Equal(t, QPInit, got.State, "%v", typ)
		assert.Equal(t, uint16(5), got.PKeyIndex, "%v", typ)
		assert.Equal(t, uint8(2), got.Port, "%v", typ)
		assert.NotZero(t, m.mask&maskPKeyIndex, "%v: the P_Key index is in the mask", typ)

		m, err := qp.rtrModify(RTRAttr{
			MTU: MTU1024, DestQPN: 0x11, DLID: 9, DGID: dgid, GIDIndex: 3,
			SL: 15, TrafficClass: 0xb8, FlowLabel: 0xfffff,
		})
		require.NoError(t, err)
		assert.NotZero(t, m.mask&maskAV, "%v: the address vector is in the mask", typ)
		got = qpAttrRoundTrip(&m)
		assert.Equal(t, QPAttr{
			State: QPRTR, Port: 0, MTU: MTU1024, DestQPN: 0x11,
			DLID: 9, SL: 15, IsGlobal: true, DGID: dgid, SGIDIndex: 3, HopLimit: 64,
			TrafficClass: 0xb8, FlowLabel: 0xfffff,
		}, got, "%v", typ)
	}

	// InfiniBand within a subnet: no DGID, no GRH: the traffic class and
	// flow label are not sent (as perftest without -x), the SL still is.
	m, err := (&QP{typ: RC, port: 1}).rtrModify(RTRAttr{MTU: MTU2048, DLID: 4, SL: 7, TrafficClass: 0xb8, FlowLabel: 1})
	require.NoError(t, err)
	got := qpAttrRoundTrip(&m)
	assert.False(t, got.IsGlobal)
	assert.Equal(t, uint8(7), got.SL)
	assert.Zero(t, got.TrafficClass)
	assert.Zero(t, got.FlowLabel)

	// A UD address handle (QPAttr.Port is the QP's, not read here).
	f := ahFields{port: 1, dlid: 2, sl: 9, dgid: dgid, sgidIndex: 1, trafficClass: 0x68, flowLabel: 0x12345}
	f.setDefaults()
	got = ahAttrRoundTrip(&f)
	assert.Equal(t, QPAttr{DLID: 2, SL: 9, IsGlobal: true, DGID: dgid, SGIDIndex: 1, HopLimit: 64, TrafficClass: 0x68, FlowLabel: 0x12345}, got)
}
