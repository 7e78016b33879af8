package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rdmabench/rdmabench/internal/vm/debcache"
	"github.com/rdmabench/rdmabench/internal/vm/guest"
	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
)

// A UserKernel is a kernel the user built (-kernel) and its modules
// (-modules), booted instead of the cached Debian kernel.
type UserKernel struct {
	Image   string // the bzImage; "" when only -modules was given
	Release string // the bzImage's release, "" when it has none or Image is ""
	Modules *kernel.Modules
	From    string // -modules as given: a directory or a .deb
}

// OpenUserKernel checks -kernel and -modules: the image must be a bzImage,
// the modules a lib/modules/<release> tree or a linux-image .deb (unpacked
// under tmp) holding rdma_rxe, built for the image's release when both
// say which. It returns nil when neither is given.
func OpenUserKernel(ctx context.Context, image, modules, tmp string) (*UserKernel, error) {
	if image == "" && modules == "" {
		return nil, nil
	}
	if err := CheckPaths(image, modules); err != nil {
		return nil, err
	}
	uk := &UserKernel{From: modules}
	if image != "" {
		abs, err := filepath.Abs(image)
		if err != nil {
			return nil, err
		}
		if uk.Release, err = kernel.Release(image); err != nil {
			return nil, fmt.Errorf("-kernel: %w", err)
		}
		uk.Image = abs
	}
	dir := modules
	deb, err := isDeb(modules)
	if err != nil {
		return nil, fmt.Errorf("-modules %s: %w", modules, err)
	}
	if deb {
		unpacked := filepath.Join(tmp, "modules")
		if _, err := debcache.ExtractModules(ctx, modules, unpacked); err != nil {
			return nil, fmt.Errorf("-modules %s: %w", modules, err)
		}
		dir = unpacked
	}
	if uk.Modules, err = kernel.OpenModules(dir); err != nil {
		return nil, fmt.Errorf("-modules %s: %w", modules, err)
	}
	if uk.Release != "" && uk.Modules.Release != uk.Release {
		return nil, fmt.Errorf("-kernel %s is release %s but -modules %s holds modules for %s: give the modules built with that kernel",
			image, uk.Release, modules, uk.Modules.Release)
	}
	return uk, nil
}

// CheckPaths checks what can be checked of -kernel and -modules without
// reading them: -kernel comes with -modules, and both exist.
func CheckPaths(image, modules string) error {
	if image != "" && modules == "" {
		return fmt.Errorf("-kernel %s needs -modules: the modules of that kernel, as a lib/modules/<release> directory "+
			"(make modules_install INSTALL_MOD_PATH=DIR, then -modules DIR) or its linux-image .deb", image)
	}
	if image != "" {
		if _, err := os.Stat(image); err != nil {
			return fmt.Errorf("-kernel %s: %w: give the bzImage the kernel build wrote (arch/x86/boot/bzImage) or a /boot/vmlinuz-<release>", image, pathErr(err))
		}
	}
	if modules != "" {
		if _, err := os.Stat(modules); err != nil {
			return fmt.Errorf("-modules %s: %w: give a lib/modules/<release> directory or a linux-image .deb", modules, pathErr(err))
		}
	}
	return nil
}

// pathErr is what went wrong with a path, without the path (the message
// names it already).
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isDeb reports whether path is a Debian package (an ar archive), and
// whether it exists at all.
func isDeb(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	magic := make([]byte, 8)
	if _, err := io.ReadFull(f, magic); err != nil {
		return false, nil
	}
	return bytes.Equal(magic, []byte("!<arch>\n")), nil
}

// CheckWith checks modules given without -kernel against the kernel they
// will run under, the cached Debian one at base.
func (uk *UserKernel) CheckWith(base *Base) error {
	if uk.Image != "" {
		return nil
	}
	rel, err := kernel.Release(base.Kernel)
	if err != nil {
		return err
	}
	if rel != "" && rel != uk.Modules.Release {
		return fmt.Errorf("-modules %s holds modules for %s, but without -kernel the guest boots the cached Debian kernel %s: "+
			"give -kernel with the kernel those modules were built for", uk.Modules.Dir, uk.Modules.Release, rel)
	}
	return nil
}

// AddTo adds the user's modules to the run's archive a, with an /init
// that loads them in place of the base's: the single-VM /init, or a fleet
// node's (slurm: with Slurm's daemons) when fleet is set.
func (uk *UserKernel) AddTo(a *initramfs.Archive, fleet, slurm bool) error {
	if fleet {
		mods, err := addModules(a, uk.Modules, fleetModules(), nil)
		if err != nil {
			return fmt.Errorf("-modules: %w", err)
		}
		a.File("init", 0o755, []byte(guest.FleetInitScript(mods, slurm)))
		return nil
	}
	rdma, ninep, nic, err := addVMModules(a, uk.Modules)
	if err != nil {
		return fmt.Errorf("-modules: %w", err)
	}
	a.File("init", 0o755, []byte(guest.InitScript(rdma, ninep, nic)))
	return nil
}
