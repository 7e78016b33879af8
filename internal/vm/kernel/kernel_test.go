package kernel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeModule writes a minimal relocatable ELF file holding only a
// .modinfo section with the given key=value strings, as a module has.
func writeModule(t *testing.T, name string, modinfo ...string) {
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

func TestReadModinfo(t *testing.T) {
	ko := filepath.Join(t.TempDir(), "rdma_rxe.ko")
	writeModule(t, ko, "license=GPL", "depends=ib_uverbs,ib_core", "name=rdma_rxe",
		"vermagic=6.1.0-57-amd64 SMP preempt mod_unload modversions ")
	m, err := ReadModinfo(ko)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "rdma_rxe" || !slices.Equal(m.Depends, []string{"ib_uverbs", "ib_core"}) || m.Release() != "6.1.0-57-amd64" {
		t.Errorf("ReadModinfo = %+v (release %q)", m, m.Release())
	}
}

// rxeTree writes the soft-RoCE modules of release rel under dir, in the
// layout of lib/modules/<rel>, without a modules.dep.
func rxeTree(t *testing.T, dir, rel string) {
	t.Helper()
	vm := "vermagic=" + rel + " SMP mod_unload"
	writeModule(t, filepath.Join(dir, "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko"), "depends=ib_uverbs,ib_core,udp_tunnel", "name=rdma_rxe", vm)
	writeModule(t, filepath.Join(dir, "kernel/drivers/infiniband/core/ib_uverbs.ko"), "depends=ib_core", "name=ib_uverbs", vm)
	writeModule(t, filepath.Join(dir, "kernel/drivers/infiniband/core/ib_core.ko"), "depends=", "name=ib_core", vm)
	writeModule(t, filepath.Join(dir, "kernel/net/ipv4/udp_tunnel.ko"), "depends=", "name=udp_tunnel", vm)
	os.WriteFile(filepath.Join(dir, "modules.builtin"), []byte("kernel/crypto/crc32_generic.ko\n"), 0o644)
}

func TestOpenModulesLayouts(t *testing.T) {
	root := t.TempDir()
	rel := filepath.Join(root, "lib", "modules", "6.13.0-rxe")
	rxeTree(t, rel, "6.13.0-rxe")
	// The release directory, its parent and the install root all lead to it.
	for _, p := range []string{rel, filepath.Dir(rel), root} {
		m, err := OpenModules(p)
		if err != nil {
			t.Errorf("OpenModules(%s): %v", p, err)
			continue
		}
		if m.Dir != rel || m.Release != "6.13.0-rxe" {
			t.Errorf("OpenModules(%s) = %s, release %s; want %s, 6.13.0-rxe", p, m.Dir, m.Release, rel)
		}
	}
	// Without modules.dep, the order comes from each module's depends=.
	m, _ := OpenModules(rel)
	got, err := m.LoadOrder([]string{"crc32_generic", "rdma_rxe"})
	want := []string{
		"kernel/drivers/infiniband/core/ib_core.ko", // via ib_uverbs, first dependency listed
		"kernel/drivers/infiniband/core/ib_uverbs.ko",
		"kernel/net/ipv4/udp_tunnel.ko",
		"kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko",
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("LoadOrder from .modinfo = %q, %v\nwant %q", got, err, want)
	}
	// The release comes from rdma_rxe's vermagic, not the directory's name.
	renamed := filepath.Join(t.TempDir(), "mykernel")
	rxeTree(t, renamed, "6.13.0-rxe")
	if m, err := OpenModules(renamed); err != nil || m.Release != "6.13.0-rxe" {
		t.Errorf("renamed directory: release %v, %v; want 6.13.0-rxe", m, err)
	}
}

func TestOpenModulesErrors(t *testing.T) {
	noRxe := t.TempDir()
	writeModule(t, filepath.Join(noRxe, "kernel/net/veth.ko"), "name=veth", "vermagic=6.1 SMP")
	two := t.TempDir()
	rxeTree(t, filepath.Join(two, "6.1.0-a"), "6.1.0-a")
	rxeTree(t, filepath.Join(two, "6.1.0-b"), "6.1.0-b")
	file := filepath.Join(t.TempDir(), "bzImage")
	os.WriteFile(file, []byte("x"), 0o644)
	brokenDep := t.TempDir()
	writeModule(t, filepath.Join(brokenDep, "kernel/rdma_rxe.ko"), "depends=ib_core", "name=rdma_rxe", "vermagic=6.1 SMP")
	packed := t.TempDir()
	rxeTree(t, packed, "6.1")
	os.Rename(filepath.Join(packed, "kernel/net/ipv4/udp_tunnel.ko"), filepath.Join(packed, "kernel/net/ipv4/udp_tunnel.ko.xz"))
	for _, tt := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(noRxe, "nope"), "no such file or directory"},
		{"no rxe", noRxe, "no rdma_rxe.ko and modules.builtin does not list it: build the kernel with CONFIG_RDMA_RXE=m"},
		{"two kernels", two, "holds the modules of 2 kernels (6.1.0-a, 6.1.0-b): give one of them, e.g. " + filepath.Join(two, "6.1.0-a")},
		{"empty", t.TempDir(), "holds no kernel modules: give a lib/modules/<release> directory"},
		{"a file", file, "not a directory"},
	} {
		if _, err := OpenModules(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: OpenModules = %v, want it to say %q", tt.name, err, tt.want)
		}
	}
	m, err := OpenModules(brokenDep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.LoadOrder([]string{"rdma_rxe"}); err == nil || !strings.Contains(err.Error(), "needs ib_core") {
		t.Errorf("a missing dependency: %v, want it named", err)
	}
	m, err = OpenModules(packed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.LoadOrder([]string{"rdma_rxe"}); err == nil || !strings.Contains(err.Error(), "CONFIG_MODULE_COMPRESS_NONE") {
		t.Errorf("compressed modules: %v, want a refusal naming CONFIG_MODULE_COMPRESS_NONE", err)
	}
}

func TestModName(t *testing.T) {
	for in, want := range map[string]string{
		"kernel/net/9p/9pnet_virtio.ko": "9pnet_virtio",
		"dash-name.ko":                  "dash_name",
		"kernel/x/rdma_rxe.ko.xz":       "rdma_rxe",
		"rdma_rxe":                      "rdma_rxe",
	} {
		if got := ModName(in); got != want {
			t.Errorf("ModName(%q) = %q, want %q", in, got, want)
		}
	}
}
