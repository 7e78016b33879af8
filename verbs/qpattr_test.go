package verbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueryQPPath checks that the path a connected QP is given at INIT and
// RTR (service level, traffic class, flow label, P_Key index) is the one
// the device keeps: ibv_query_qp reads it back. rxe keeps SL and the GRH
// fields though it sends no VLAN priority; its P_Key table has one entry,
// so only index 0 is there to set.
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
			assert.Equal(t, uint8(sl), got.SL)
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
