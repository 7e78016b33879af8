package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/debcache"
	"github.com/rdmabench/rdmabench/internal/vm/guest"
	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
)

// The siw layer (rxevm -siw) is a third cached initramfs, appended after
// the base: soft-iWARP's module, built from Debian's source
// (buildModule), the kernel's modules it needs that the base lacks
// (libcrc32c, and crc32c_generic, which libcrc32c asks the crypto layer
// for by name: busybox insmod does not load it on demand), and
// guest.SIWScript, which /init runs when it finds it.
const siwLayerFormat = "rxevm-siw-layer-1"

// siwSource is soft-iWARP in the kernel tree (CONFIG_RDMA_SIW is not set
// in Debian's kernels).
var siwSource = moduleSource{Dir: "drivers/infiniband/sw/siw", Config: "CONFIG_RDMA_SIW", Module: "siw"}

// siwModules are loaded in this order besides what the base loads.
var siwModules = []string{"crc32c_generic", "libcrc32c", "siw"}

// A SIWLayer is the cached siw layer.
type SIWLayer struct {
	CPIO  string          // siw.cpio
	Files map[string]bool // guest paths in it
}

// LoadSIW returns the siw layer that goes with base, building siw.ko and
// the layer when needed. The caller holds the base cache lock.
func LoadSIW(ctx context.Context, cacheDir string, base *Base, busybox string, logf func(string, ...any)) (*SIWLayer, error) {
	kernelDeb, kpkg, err := kernelDebOf(cacheDir, base)
	if err != nil {
		return nil, fmt.Errorf("-siw: %w", err)
	}
	ko, err := buildModule(ctx, cacheDir, kpkg, siwSource, logf)
	if err != nil {
		return nil, fmt.Errorf("-siw: %w", err)
	}
	h := sha256.New()
	fmt.Fprintln(h, siwLayerFormat, filepath.Base(base.Dir), filepath.Base(kernelDeb), ko)
	fmt.Fprintln(h, guest.SIWScript(nil)) // the script's text: a new one makes a new layer
	dir := filepath.Join(modulesCacheDir(cacheDir), "siwlayer-"+hex.EncodeToString(h.Sum(nil))[:16])
	if l, err := openSIWLayer(dir); err == nil {
		return l, nil
	}
	start := time.Now()
	if err := buildSIWLayer(ctx, dir, kernelDeb, ko, base, busybox); err != nil {
		return nil, fmt.Errorf("-siw layer: %w", err)
	}
	logf("siw layer ready in %.1f s: %s", time.Since(start).Seconds(), dir)
	return openSIWLayer(dir)
}

func openSIWLayer(dir string) (*SIWLayer, error) {
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		return nil, err
	}
	l := &SIWLayer{CPIO: filepath.Join(dir, "siw.cpio"), Files: map[string]bool{}}
	if _, err := os.Stat(l.CPIO); err != nil {
		return nil, err
	}
	for _, p := range strings.Split(string(manifest), "\n") {
		if p != "" {
			l.Files[p] = true
		}
	}
	return l, nil
}

// buildSIWLayer puts ko among the kernel package's modules (as an update),
// resolves what it needs and writes the modules the base lacks, the
// script and the manifest into dir, by way of a temporary directory.
func buildSIWLayer(ctx context.Context, dir, kernelDeb, ko string, base *Base, busybox string) error {
	// Older layers of this cache (another base, another build) go first.
	olds, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "siwlayer-*"))
	for _, o := range olds {
		os.RemoveAll(o)
	}
	tmp := dir + ".tmp"
	defer os.RemoveAll(tmp)
	kroot := filepath.Join(tmp, "kernel")
	kver, err := debcache.ExtractModules(ctx, kernelDeb, kroot)
	if err != nil {
		return err
	}
	upd := filepath.Join(kroot, "lib/modules", kver, "updates")
	if err := os.MkdirAll(upd, 0o755); err != nil {
		return err
	}
	if err := linkOrCopyFile(ko, filepath.Join(upd, filepath.Base(ko))); err != nil {
		return err
	}
	if err := depmod(ctx, busybox, kroot, kver); err != nil {
		return err
	}
	km, err := kernel.OpenModules(filepath.Join(kroot, "lib/modules", kver))
	if err != nil {
		return err
	}
	b := initramfs.New()
	mods, err := addModules(b, km, siwModules, base.Files)
	if err != nil {
		return err
	}
	// The base loads ib_core and the rest before the script runs: only
	// what it lacks is loaded (and carried) here.
	var load []string
	for _, m := range mods {
		if !base.Files[initramfs.GuestPath(m)] {
			load = append(load, m)
		}
	}
	b.File(guest.SIWScriptPath, 0o644, []byte(guest.SIWScript(load)))
	if err := b.WriteFile(filepath.Join(tmp, "siw.cpio")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest"), []byte(strings.Join(b.Paths(), "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(kroot); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// linkOrCopyFile hard-links src to dst, or copies it.
func linkOrCopyFile(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
