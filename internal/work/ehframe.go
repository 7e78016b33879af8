package work

import (
	"debug/elf"
	"encoding/binary"
	"sort"
)

// fdeStarts returns the start addresses (link-time virtual addresses) of
// the functions that f's .eh_frame_hdr lists: a stripped object keeps this
// table (for unwinding), so its static functions still have bounds when
// they have no names. Only the encoding that linkers write is read
// (udata4 count, datarel sdata4 pairs); otherwise nil.
func fdeStarts(f *elf.File) []uint64 {
	s := f.Section(".eh_frame_hdr")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	b, err := s.Data()
	if err != nil || len(b) < 12 || b[0] != 1 {
		return nil
	}
	const udata4, sdata4, pcrel, datarel = 0x03, 0x0b, 0x10, 0x30
	if b[2] != udata4 || b[3] != datarel|sdata4 {
		return nil
	}
	// eh_frame_ptr is 4 bytes in every encoding linkers use here.
	if b[1]&0x0f != sdata4 && b[1]&0x0f != udata4 || b[1]&0x70 != pcrel && b[1]&0x70 != 0 {
		return nil
	}
	n := uint64(binary.LittleEndian.Uint32(b[8:]))
	if n > uint64(len(b)-12)/8 {
		return nil
	}
	starts := make([]uint64, 0, n)
	for i := uint64(0); i < n; i++ {
		rel := int32(binary.LittleEndian.Uint32(b[12+8*i:]))
		starts = append(starts, uint64(int64(s.Addr)+int64(rel)))
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	return starts
}
