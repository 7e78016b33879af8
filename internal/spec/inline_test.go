package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDefaultInline: perftest's latency-test inline defaults for devices
// as ibv_devinfo reports their vendor and part ids.
func TestDefaultInline(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		vendor, part                uint32
		family                      Family
		write, sendRC, sendUD, read int
	}{
		{"ConnectX-6 (mlx5)", 0x02c9, 4123, FamilyDefault, 220, 236, 188, 0},
		{"ConnectX-7", 0x02c9, 4129, FamilyDefault, 220, 236, 188, 0},
		{"rxe", 0xffffff, 0, FamilyUnknown, 0, 0, 0, 0},
		{"siw", 0x626d74, 0, FamilyUnknown, 0, 0, 0, 0},
		{"bnxt_re BCM57508", 0x14e4, 5872, FamilyBnxt, 96, 96, 96, 0},
		{"EFA", 0x1d0f, 61345, FamilyEFA, 32, 32, 32, 0},
		{"irdma E810", 0x8086, 0x1592, FamilyIntelGen2, 101, 101, 101, 0},
		{"i40iw X722", 0x8086, 14289, FamilyIntelGen1, 48, 48, 48, 0},
		{"HNS", 0x19e5, 41512, FamilyHNS, 32, 32, 32, 0},
		{"erdma", 0x1ded, 4223, FamilyERDMA, 96, 96, 96, 0},
		{"qedr E4", 0x1077, 5718, FamilyQLogicE4, 128, 128, 128, 0},
		{"Chelsio T6", 5157, 0x6401, FamilyDefault, 220, 236, 188, 0},
		{"Chelsio unknown generation", 5157, 0x1401, FamilyUnknown, 0, 0, 0, 0},
		{"NBL Leonis: no UD inline", 0x1f0f, 0x3403, FamilyNBLLeonis, 32, 32, 0, 0},
		{"NBL Draco", 0x1f0f, 0x3505, FamilyNBL, 465, 465, 434, 0},
		{"Yunsilicon Diamond", 0x1f67, 0x1021, FamilyYunsiliconD, 64, 64, 64, 0},
		{"unknown part", 0x1234, 77, FamilyUnknown, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := DeviceFamily(tc.vendor, tc.part)
			assert.Equal(t, tc.family, f)
			assert.Equal(t, tc.write, DefaultInline(f, Write, RC), "write")
			assert.Equal(t, tc.write, DefaultInline(f, WriteImm, UC), "write-with-imm")
			assert.Equal(t, tc.sendRC, DefaultInline(f, Send, RC), "send RC")
			assert.Equal(t, tc.sendRC, DefaultInline(f, Send, UC), "send UC")
			assert.Equal(t, tc.sendUD, DefaultInline(f, Send, UD), "send UD")
			assert.Equal(t, tc.read, DefaultInline(f, Read, RC), "read")
			assert.Zero(t, DefaultInline(f, FetchAdd, RC), "atomic")
		})
	}
}
