package spec

// Family is the device family perftest recognises from a device's vendor
// and part ids (ibv_query_device), which decides its default inline size
// in the latency tests. FamilyUnknown devices (rxe, siw, anything not in
// the table) get no inline data by default ("Device not recognized to
// implement inline feature. Disabling it").
type Family string

// The families whose latency defaults differ; every other recognised
// device (ConnectX, BlueField, Chelsio, QLogic AH, Pensando, ...) is
// FamilyDefault.
const (
	FamilyUnknown     Family = ""
	FamilyDefault     Family = "default"
	FamilyBnxt        Family = "bnxt_re" // Broadcom NetXtreme
	FamilyEFA         Family = "efa"     // AWS Elastic Fabric Adapter
	FamilyQLogicE4    Family = "qedr"    // QLogic/Marvell FastLinQ E4
	FamilyERDMA       Family = "erdma"   // Alibaba Elastic RDMA
	FamilyHNS         Family = "hns"     // HiSilicon
	FamilyIntelGen1   Family = "i40iw"   // Intel X722
	FamilyIntelGen2   Family = "irdma"   // Intel E810 and later Intel parts
	FamilyYunsilicon  Family = "xsc"     // Yunsilicon Andes
	FamilyYunsiliconD Family = "xsc-diamond"
	FamilyNBLLeonis   Family = "nbl-leonis" // Nebula Matrix
	FamilyNBL         Family = "nbl"        // Nebula Matrix DF200, Draco, RNIC400
)

// inlineByFamily is perftest's latency-test default inline size per
// family, as bytes for WRITE (and write-with-imm), SEND over RC/UC and
// SEND over UD (perftest 26.x, src/perftest_parameters.c,
// ctx_set_max_inline). READ and atomics carry no inline data.
var inlineByFamily = map[Family]struct{ write, sendRC, sendUD int }{
	FamilyDefault:     {220, 236, 188},
	FamilyBnxt:        {96, 96, 96},
	FamilyEFA:         {32, 32, 32},
	FamilyQLogicE4:    {128, 128, 128},
	FamilyERDMA:       {96, 96, 96},
	FamilyHNS:         {32, 32, 32},
	FamilyIntelGen1:   {48, 48, 48},
	FamilyIntelGen2:   {101, 101, 101},
	FamilyYunsilicon:  {32, 32, 32},
	FamilyYunsiliconD: {64, 64, 64},
	FamilyNBLLeonis:   {32, 32, 0},
	FamilyNBL:         {465, 465, 434},
}

// Vendor ids (PCI) that perftest tells apart before it looks at part ids.
const (
	vendorChelsio    = 5157 // 0x1425
	vendorIntel      = 0x8086
	vendorTCU        = 0x209b
	vendorYunsilicon = 0x1f67
	vendorNBL        = 0x1f0f
	vendorPensando   = 0x1dd8
)

// familyByPart is perftest's table for every other vendor, keyed by part
// id alone (perftest does not check the vendor there): the parts whose
// inline default is not FamilyDefault, and the recognised parts with the
// default (ConnectX, BlueField, Emulex Skyhawk, QLogic AH/AHP).
var familyByPart = func() map[uint32]Family {
	m := map[uint32]Family{}
	add := func(f Family, parts ...uint32) {
		for _, p := range parts {
			m[p] = f
		}
	}
	add(FamilyDefault,
		4099, 4100, 4103, 4104, 4113, 4115, 4116, 4117, 4118, 4119, 4120, 4121, 4122, 4123, 4124, // ConnectX-3 .. 6
		4125, 4126, 4127, 4129, 4131, 4133, 4135, // ConnectX-6 Dx .. 10, mlx5 VF
		41682, 41683, 41686, 41692, 41695, // BlueField 1-4
		26418, 26428, 26438, 26448, 26458, 26468, 26478, 25408, 25418, 25428, 25448, // ConnectX, ConnectX-2
		1824,                                            // Emulex Skyhawk
		32880, 32881, 32882, 32883, 32912, 33136, 33168) // QLogic AH, AHP
	add(FamilyQLogicE4, 5684, 5700, 5716, 5718, 5734)
	add(FamilyBnxt, 5638, 5652, 5824, 5825, 5827, 5839, 5846, 5847, 5848, 5849, 5855, 5858, 5859, 5861,
		5867, 5869, 5871, 5872, 5873, 5968, 5984, 6169, 55296, 55298, 55300)
	add(FamilyEFA, 61344, 61345, 61346, 61347, 61348)
	add(FamilyERDMA, 4223)
	add(FamilyHNS, 41506, 41507, 41508, 41509, 41510, 41512, 41519)
	return m
}()

// DeviceFamily returns the family perftest recognises a device as, from
// its vendor and part ids.
func DeviceFamily(vendor, part uint32) Family {
	switch vendor {
	case vendorChelsio:
		switch part >> 12 {
		case 4, 5, 6, 10, 11: // T4, T5, T6
			return FamilyDefault
		}
		return FamilyUnknown
	case vendorIntel:
		if part == 14289 {
			return FamilyIntelGen1
		}
		return FamilyIntelGen2
	case vendorTCU:
		if part == 0x1000 {
			return FamilyDefault
		}
		return FamilyUnknown
	case vendorYunsilicon:
		if part == 0x1021 || part == 0x1023 {
			return FamilyYunsiliconD
		}
		return FamilyYunsilicon
	case vendorNBL:
		switch {
		case part == 0x1047 || part == 0x1226 || part == 0x1227 || part == 0x1610 || (part >= 0x3500 && part <= 0x350a):
			return FamilyNBL
		}
		return FamilyNBLLeonis
	case vendorPensando:
		return FamilyDefault
	}
	return familyByPart[part]
}

// DefaultInline returns perftest's default inline size in its latency
// tests for op over t on a device of family f (no -I given): 0 on a device
// it does not recognise and for READ and atomics.
func DefaultInline(f Family, op Op, t Transport) int {
	d, ok := inlineByFamily[f]
	if !ok || !op.Inline() {
		return 0
	}
	switch {
	case op != Send && op != SendImm:
		return d.write
	case t == UD:
		return d.sendUD
	}
	return d.sendRC
}
