package kernel

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/vm/kernel/kerneltest"
)

func TestRelease(t *testing.T) {
	dir := t.TempDir()
	bz := filepath.Join(dir, "bzImage")
	kerneltest.WriteBzImage(t, bz, "6.13.0-rc1-rxe+ (me@host) #3 SMP PREEMPT_DYNAMIC Mon Dec  1 2026")
	if got, err := Release(bz); err != nil || got != "6.13.0-rc1-rxe+" {
		t.Errorf("Release = %q, %v; want 6.13.0-rc1-rxe+", got, err)
	}
	vmlinux := filepath.Join(dir, "vmlinux")
	kerneltest.WriteModule(t, vmlinux, "x=y") // any ELF file
	if _, err := Release(vmlinux); !errors.Is(err, ErrNotBzImage) || !strings.Contains(err.Error(), "bzImage") {
		t.Errorf("Release(vmlinux) = %v, want ErrNotBzImage naming arch/x86/boot/bzImage", err)
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, bytes.Repeat([]byte("x"), 0x400), 0o644)
	if _, err := Release(junk); !errors.Is(err, ErrNotBzImage) {
		t.Errorf("Release(junk) = %v, want ErrNotBzImage", err)
	}
	if _, err := Release(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Release(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestReadModinfo(t *testing.T) {
	ko := filepath.Join(t.TempDir(), "rdma_rxe.ko")
	kerneltest.WriteModule(t, ko, "license=GPL", "depends=ib_uverbs,ib_core", "name=rdma_rxe",
		"vermagic=6.1.0-57-amd64 SMP preempt mod_unload modversions ")
	m, err := ReadModinfo(ko)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "rdma_rxe" || !slices.Equal(m.Depends, []string{"ib_uverbs", "ib_core"}) || m.Release() != "6.1.0-57-amd64" {
		t.Errorf("ReadModinfo = %+v (release %q)", m, m.Release())
	}
}

func TestOpenModulesLayouts(t *testing.T) {
	root := t.TempDir()
	rel := filepath.Join(root, "lib", "modules", "6.13.0-rxe")
	kerneltest.RxeTree(t, rel, "6.13.0-rxe")
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
	kerneltest.RxeTree(t, renamed, "6.13.0-rxe")
	if m, err := OpenModules(renamed); err != nil || m.Release != "6.13.0-rxe" {
		t.Errorf("renamed directory: release %v, %v; want 6.13.0-rxe", m, err)
	}
}

func TestOpenModulesErrors(t *testing.T) {
	noRxe := t.TempDir()
	kerneltest.WriteModule(t, filepath.Join(noRxe, "kernel/net/veth.ko"), "name=veth", "vermagic=6.1 SMP")
	two := t.TempDir()
	kerneltest.RxeTree(t, filepath.Join(two, "6.1.0-a"), "6.1.0-a")
	kerneltest.RxeTree(t, filepath.Join(two, "6.1.0-b"), "6.1.0-b")
	file := filepath.Join(t.TempDir(), "bzImage")
	os.WriteFile(file, []byte("x"), 0o644)
	brokenDep := t.TempDir()
	kerneltest.WriteModule(t, filepath.Join(brokenDep, "kernel/rdma_rxe.ko"), "depends=ib_core", "name=rdma_rxe", "vermagic=6.1 SMP")
	packed := t.TempDir()
	kerneltest.RxeTree(t, packed, "6.1")
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
