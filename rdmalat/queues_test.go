package rdmalat

import (
	"testing"

	"github.com/rdmabench/rdmabench/verbs"
)

// TestUseGRH checks the routing decision on both link layers, since no
// InfiniBand device is at hand: perftest sends no GRH on InfiniBand unless
// -x is given, and always one on RoCE.
func TestUseGRH(t *testing.T) {
	for _, tc := range []struct {
		ll       verbs.LinkLayer
		gidGiven bool
		want     bool
	}{
		{verbs.LinkLayerInfiniBand, false, false}, // routed by LID
		{verbs.LinkLayerInfiniBand, true, true},   // -x given: a GRH
		{verbs.LinkLayerUnspecified, false, false},
		{verbs.LinkLayerUnspecified, true, true},
		{verbs.LinkLayerEthernet, false, true}, // RoCE: the GID is the address
		{verbs.LinkLayerEthernet, true, true},
	} {
		if got := useGRH(tc.ll, tc.gidGiven); got != tc.want {
			t.Errorf("useGRH(%v, gid index given %v) = %v, want %v", tc.ll, tc.gidGiven, got, tc.want)
		}
	}
}

func TestOutstandingReads(t *testing.T) {
	for _, tc := range []struct {
		rd, init             int
		wantInit, wantAccept uint8
	}{
		{128, 128, 128, 128}, // rxe
		{16, 8, 8, 16},       // initiating capped by max_qp_init_rd_atom
		{0, 0, 1, 1},         // a device that reports none still takes one
		{1000, 1000, 255, 255},
	} {
		i, a := outstandingReads(verbs.DeviceAttr{MaxQPRdAtom: tc.rd, MaxQPInitRdAtom: tc.init})
		if i != tc.wantInit || a != tc.wantAccept {
			t.Errorf("outstandingReads(rd %d, init %d) = %d, %d; want %d, %d", tc.rd, tc.init, i, a, tc.wantInit, tc.wantAccept)
		}
	}
}
