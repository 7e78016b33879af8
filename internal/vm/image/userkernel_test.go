package image

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
	"github.com/rdmabench/rdmabench/internal/vm/kernel/kerneltest"
)

// userTree writes a kernel of release rel and its soft-RoCE modules (with
// the 9p and fleet modules /init loads) under dir: dir/bzImage and
// dir/lib/modules/rel.
func userTree(t *testing.T, dir, rel string) (bz, mods string) {
	t.Helper()
	bz = filepath.Join(dir, "bzImage")
	kerneltest.WriteBzImage(t, bz, rel+" (me@host) #1 SMP")
	mods = filepath.Join(dir, "lib", "modules", rel)
	kerneltest.RxeTree(t, mods, rel)
	// Everything else /init loads is built in here.
	var builtin []string
	for _, n := range append(append(append([]string{}, vmModules()...), ninepModules...), layerModules...) {
		if n != "rdma_rxe" && n != "ib_uverbs" && n != "ib_core" && n != "udp_tunnel" {
			builtin = append(builtin, "kernel/x/"+n+".ko")
		}
	}
	if err := os.WriteFile(filepath.Join(mods, "modules.builtin"), []byte(strings.Join(builtin, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bz, mods
}

func TestOpenUserKernel(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	bz, mods := userTree(t, dir, "6.13.0-rxe")
	if uk, err := OpenUserKernel(ctx, "", "", t.TempDir()); uk != nil || err != nil {
		t.Errorf("neither flag: %v, %v; want nil, nil", uk, err)
	}
	uk, err := OpenUserKernel(ctx, bz, dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if uk.Release != "6.13.0-rxe" || uk.Modules.Release != "6.13.0-rxe" || uk.Modules.Dir != mods || !filepath.IsAbs(uk.Image) {
		t.Errorf("OpenUserKernel = %+v (modules %s, %s)", uk, uk.Modules.Dir, uk.Modules.Release)
	}

	other := t.TempDir()
	_, otherMods := userTree(t, other, "6.12.9")
	notBz := filepath.Join(t.TempDir(), "vmlinux")
	kerneltest.WriteModule(t, notBz, "x=y")
	noRxe := t.TempDir()
	kerneltest.WriteModule(t, filepath.Join(noRxe, "kernel/net/veth.ko"), "name=veth", "vermagic=6.13.0-rxe SMP")
	for _, tt := range []struct {
		name, kernel, modules, want string
	}{
		{"kernel alone", bz, "", "-kernel " + bz + " needs -modules: the modules of that kernel"},
		{"no kernel file", filepath.Join(dir, "nope"), mods, "no such file or directory: give the bzImage the kernel build wrote (arch/x86/boot/bzImage)"},
		{"no modules path", bz, filepath.Join(dir, "nope"), "no such file or directory: give a lib/modules/<release> directory or a linux-image .deb"},
		{"not a bzImage", notBz, mods, "not an x86 bzImage: an ELF file (vmlinux?)"},
		{"no rdma_rxe", bz, noRxe, "no rdma_rxe.ko and modules.builtin does not list it"},
		{"other release", bz, otherMods, "-kernel " + bz + " is release 6.13.0-rxe but -modules " + otherMods + " holds modules for 6.12.9: give the modules built with that kernel"},
	} {
		_, err := OpenUserKernel(ctx, tt.kernel, tt.modules, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want it to say %q", tt.name, err, tt.want)
		}
	}
	if _, err := OpenUserKernel(ctx, notBz, mods, t.TempDir()); !errors.Is(err, kernel.ErrNotBzImage) {
		t.Errorf("not a bzImage: %v does not match kernel.ErrNotBzImage", err)
	}
}

// -modules alone must match the cached Debian kernel the guest boots.
func TestUserModulesCheckWith(t *testing.T) {
	dir := t.TempDir()
	_, mods := userTree(t, dir, "6.1.0-57-amd64")
	uk, err := OpenUserKernel(t.Context(), "", mods, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	same := filepath.Join(t.TempDir(), "vmlinuz")
	kerneltest.WriteBzImage(t, same, "6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP")
	if err := uk.CheckWith(&Base{Kernel: same}); err != nil {
		t.Errorf("modules of the cached kernel's release: %v", err)
	}
	newer := filepath.Join(t.TempDir(), "vmlinuz")
	kerneltest.WriteBzImage(t, newer, "6.1.0-58-amd64 (debian-kernel@lists.debian.org) #1 SMP")
	err = uk.CheckWith(&Base{Kernel: newer})
	if err == nil || !strings.Contains(err.Error(), "holds modules for 6.1.0-57-amd64, but without -kernel the guest boots the cached Debian kernel 6.1.0-58-amd64: give -kernel") {
		t.Errorf("modules of another release: %v", err)
	}
}

// AddTo puts the user's modules in the run's archive and an /init that
// loads them in order, the built-in ones left out.
func TestUserKernelAddTo(t *testing.T) {
	_, mods := userTree(t, t.TempDir(), "6.13.0-rxe")
	uk, err := OpenUserKernel(t.Context(), "", mods, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, fleet := range []bool{false, true} {
		a := initramfs.New()
		if err := uk.AddTo(a, fleet, false); err != nil {
			t.Fatal(err)
		}
		const guest = "/usr/lib/modules/6.13.0-rxe/kernel/drivers/infiniband/"
		if !a.Has(guest+"sw/rxe/rdma_rxe.ko") || !a.Has(guest+"core/ib_core.ko") || !a.Has("init") {
			t.Errorf("fleet=%v: archive lacks the modules or /init: %q", fleet, a.Paths())
		}
		var init strings.Builder
		if err := a.Encode(&init); err != nil {
			t.Fatal(err)
		}
		s := init.String()
		core, rxe := strings.Index(s, "insmod"), strings.Index(s, guest+"core/ib_core.ko \\\n\t"+guest+"core/ib_uverbs.ko")
		if core < 0 || rxe < 0 || !strings.Contains(s, guest+"sw/rxe/rdma_rxe.ko") {
			t.Errorf("fleet=%v: /init does not load ib_core, ib_uverbs, ..., rdma_rxe in order", fleet)
		}
		if strings.Contains(s, "veth.ko") {
			t.Errorf("fleet=%v: /init loads a built-in module", fleet)
		}
	}
}

func TestIsDeb(t *testing.T) {
	dir := t.TempDir()
	deb := filepath.Join(dir, "linux-image.deb")
	os.WriteFile(deb, []byte("!<arch>\ndebian-binary   "), 0o644)
	if ok, err := isDeb(deb); !ok || err != nil {
		t.Errorf("isDeb(an ar archive) = %v, %v", ok, err)
	}
	if ok, err := isDeb(dir); ok || err != nil {
		t.Errorf("isDeb(a directory) = %v, %v", ok, err)
	}
	if _, err := isDeb(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("isDeb(missing) = %v", err)
	}
}
