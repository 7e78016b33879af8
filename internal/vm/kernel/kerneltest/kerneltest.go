// Package kerneltest writes the kernel files that tests of rxevm's kernel
// handling need: a module file with a given .modinfo, the setup header of a
// bzImage, a soft-RoCE modules tree.
package kerneltest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteModule writes a minimal relocatable ELF file holding only a
// .modinfo section with the given key=value strings, as a module has.
func WriteModule(t testing.TB, name string, modinfo ...string) {
	t.Helper()
	info := []byte(strings.Join(modinfo, "\x00") + "\x00")
	shstr := []byte("\x00.modinfo\x00.shstrtab\x00")
	const ehsize, shsize = 64, 64
	infoOff := uint64(ehsize)
	strOff := infoOff + uint64(len(info))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7
	var b bytes.Buffer
	h := elf.Header64{
		Type: uint16(elf.ET_REL), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Shoff: shOff, Ehsize: ehsize, Shentsize: shsize, Shnum: 3, Shstrndx: 2,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.Write(&b, binary.LittleEndian, h)
	b.Write(info)
	b.Write(shstr)
	for uint64(b.Len()) < shOff {
		b.WriteByte(0)
	}
	for _, s := range []elf.Section64{
		{},
		{Name: 1, Type: uint32(elf.SHT_PROGBITS), Flags: uint64(elf.SHF_ALLOC), Off: infoOff, Size: uint64(len(info)), Addralign: 1},
		{Name: 10, Type: uint32(elf.SHT_STRTAB), Off: strOff, Size: uint64(len(shstr)), Addralign: 1},
	} {
		binary.Write(&b, binary.LittleEndian, s)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteBzImage writes the start of a bzImage: the setup header with
// protocol 2.15 and the version string at 0x200+off.
func WriteBzImage(t testing.TB, name, version string) {
	t.Helper()
	img := make([]byte, 0x1000)
	copy(img[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(img[0x206:], 0x20f)
	const off = 0x600
	binary.LittleEndian.PutUint16(img[0x20e:], off)
	copy(img[0x200+off:], version+"\x00")
	if err := os.WriteFile(name, img, 0o644); err != nil {
		t.Fatal(err)
	}
}

// RxeTree writes the soft-RoCE modules of release rel under dir, in the
// layout of lib/modules/<rel>, without a modules.dep.
func RxeTree(t testing.TB, dir, rel string) {
	t.Helper()
	vm := "vermagic=" + rel + " SMP mod_unload"
	WriteModule(t, filepath.Join(dir, "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko"), "depends=ib_uverbs,ib_core,udp_tunnel", "name=rdma_rxe", vm)
	WriteModule(t, filepath.Join(dir, "kernel/drivers/infiniband/core/ib_uverbs.ko"), "depends=ib_core", "name=ib_uverbs", vm)
	WriteModule(t, filepath.Join(dir, "kernel/drivers/infiniband/core/ib_core.ko"), "depends=", "name=ib_core", vm)
	WriteModule(t, filepath.Join(dir, "kernel/net/ipv4/udp_tunnel.ko"), "depends=", "name=udp_tunnel", vm)
	os.WriteFile(filepath.Join(dir, "modules.builtin"), []byte("kernel/crypto/crc32_generic.ko\n"), 0o644)
}
