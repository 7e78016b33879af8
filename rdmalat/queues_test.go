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
		lid      uint16
		want     bool
	}{
		{verbs.LinkLayerInfiniBand, false, 7, false}, // routed by LID
		{verbs.LinkLayerInfiniBand, true, 7, true},   // -x given: a GRH
		{verbs.LinkLayerUnspecified, false, 7, false},
		{verbs.LinkLayerUnspecified, true, 7, true},
		{verbs.LinkLayerEthernet, false, 0, true}, // RoCE: the GID is the address
		{verbs.LinkLayerEthernet, true, 0, true},
		// EFA: link layer unspecified, LID 0: its UD address handles
		// need the GRH (is_global) with the peer's GID.
		{verbs.LinkLayerUnspecified, false, 0, true},
		{verbs.LinkLayerInfiniBand, false, 0, true}, // no SM: no LID to route by
	} {
		if got := useGRH(tc.ll, tc.gidGiven, tc.lid); got != tc.want {
			t.Errorf("useGRH(%v, gid index given %v, LID %d) = %v, want %v", tc.ll, tc.gidGiven, tc.lid, got, tc.want)
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
