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
	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
)

// The fleet layer is a second cached initramfs, appended after the base
// only in multi-node mode (-nodes N): the kernel modules a node on a real
// NIC needs (virtio-net, netem) and Slurm with munge. Keeping it out of the
// base leaves the single-VM guest, its cache key and its boot time as they
// were.
const layerFormat = "rxevm-fleet-layer-1"

// layerPackages are the Debian packages of the fleet layer: Slurm's daemons,
// client tools and plugins, munge, and the libraries they need that a
// bookworm host does not usually have (the rest come from the host, found
// with ldd, as for the base).
var layerPackages = []string{
	"slurmd", "slurmctld", "slurm-client", "slurm-wlm-basic-plugins",
	"munge", "libmunge2", "libhwloc15", "liblua5.1-0",
}

// slurmLinks are the links the Debian packages make with update-alternatives
// in their postinst scripts, which dpkg -x does not run.
var slurmLinks = map[string]string{
	"/usr/sbin/slurmd":     "slurmd-wlm",
	"/usr/sbin/slurmctld":  "slurmctld-wlm",
	"/usr/sbin/slurmstepd": "slurmstepd-wlm",
}

// A Layer is the cached fleet layer.
type Layer struct {
	CPIO    string          // layer.cpio
	Modules []string        // guest paths of every module a fleet node loads, in order
	Files   map[string]bool // guest paths in layer.cpio
}

// layerCacheDir is where the layer is cached: beside the base cache, not in
// it, because building a new base prunes every other directory there.
func layerCacheDir(cacheDir string) string {
	return strings.TrimSuffix(cacheDir, "/") + "-fleet"
}

// LoadLayer returns the fleet layer that goes with base, building it when
// needed. The caller holds the base cache lock, which serialises builders.
func LoadLayer(ctx context.Context, cacheDir string, base *Base, busybox string, logf func(string, ...any)) (*Layer, error) {
	dir := layerCacheDir(cacheDir)
	kernelDeb, pkgs, err := layerInputs(ctx, cacheDir, base)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	fmt.Fprintln(h, layerFormat, filepath.Base(base.Dir), kernelDeb)
	for _, p := range pkgs {
		fmt.Fprintf(h, "%s=%s\n", p.Name, p.Version)
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	if err := debcache.Claim(dir, logf); err != nil {
		return nil, fmt.Errorf("fleet layer: %w", err)
	}
	kdir := filepath.Join(dir, key)
	if l, err := openLayer(kdir); err == nil {
		return l, nil
	}
	start := time.Now()
	if err := buildLayer(ctx, dir, kdir, kernelDeb, pkgs, base, busybox, logf); err != nil {
		return nil, fmt.Errorf("fleet layer: %w", err)
	}
	logf("fleet layer ready in %.1f s: %s", time.Since(start).Seconds(), kdir)
	debcache.Prune(dir, key)
	return openLayer(kdir)
}

// layerInputs finds the kernel .deb the base was built from and the
// candidate versions of the layer's packages.
func layerInputs(ctx context.Context, cacheDir string, base *Base) (string, []debcache.Package, error) {
	debs, _ := filepath.Glob(filepath.Join(cacheDir, "debs", "linux-image-*.deb"))
	var kernelDeb string
	for _, d := range debs {
		// The base holds the modules of exactly one kernel version.
		kver := strings.TrimPrefix(strings.SplitN(filepath.Base(d), "_", 2)[0], "linux-image-")
		if base.Files["usr/lib/modules/"+kver] {
			kernelDeb = d
		}
	}
	if kernelDeb == "" {
		return "", nil, fmt.Errorf("fleet layer: the kernel package of %s is not in %s/debs (remove %s to rebuild it)", base.Dir, cacheDir, base.Dir)
	}
	pkgs, err := debcache.Candidates(ctx, layerPackages)
	if err != nil {
		return "", nil, err
	}
	return kernelDeb, pkgs, nil
}

// openLayer opens a complete layer directory.
func openLayer(dir string) (*Layer, error) {
	mods, err := os.ReadFile(filepath.Join(dir, "modules"))
	if err != nil {
		return nil, err
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		return nil, err
	}
	l := &Layer{CPIO: filepath.Join(dir, "layer.cpio"), Files: map[string]bool{}}
	if _, err := os.Stat(l.CPIO); err != nil {
		return nil, err
	}
	l.Modules = strings.Fields(string(mods))
	for _, p := range strings.Split(string(manifest), "\n") {
		if p != "" {
			l.Files[p] = true
		}
	}
	return l, nil
}

// buildLayer unpacks the layer's packages and the kernel's modules, and
// writes layer.cpio (what the base lacks), the module load order and the
// manifest into kdir, by way of a temporary directory.
func buildLayer(ctx context.Context, dir, kdir, kernelDeb string, pkgs []debcache.Package, base *Base, busybox string, logf func(string, ...any)) error {
	debDir := filepath.Join(dir, "debs")
	if err := debcache.Download(ctx, debDir, pkgs, logf); err != nil {
		return err
	}
	tmp := kdir + ".tmp"
	os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	logf("extracting the fleet layer (%d packages and the kernel's modules)", len(pkgs))
	if err := debcache.Extract(ctx, debDir, pkgs, root); err != nil {
		return err
	}
	kroot := filepath.Join(tmp, "kernel")
	kver, err := debcache.ExtractModules(ctx, kernelDeb, kroot)
	if err != nil {
		return err
	}
	if err := depmod(ctx, busybox, kroot, kver); err != nil {
		return err
	}

	a := initramfs.New()
	skip := func(rel string) bool {
		return rel == "usr/share" || rel == "etc/init.d" || rel == "etc/default" || rel == "etc/logrotate.d"
	}
	if err := a.HostTree("/", root, skip); err != nil {
		return err
	}
	for p, target := range slurmLinks {
		a.Symlink(p, target)
	}
	km, err := kernel.OpenModules(filepath.Join(kroot, "lib", "modules", kver))
	if err != nil {
		return err
	}
	mods, err := addModules(a, km, fleetModules(), base.Files)
	if err != nil {
		return err
	}
	libPath := strings.Join([]string{
		filepath.Join(root, "usr/lib/x86_64-linux-gnu"),
		filepath.Join(root, "usr/lib/x86_64-linux-gnu/slurm-wlm"),
	}, ":")
	var files []string
	for _, f := range a.HostSources() {
		if strings.HasPrefix(f, root+"/") {
			files = append(files, f)
		}
	}
	if err := addLibs(ctx, a, files, libPath, root, base.Files); err != nil {
		return err
	}
	if err := a.WriteFile(filepath.Join(tmp, "layer.cpio")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "modules"), []byte(strings.Join(mods, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest"), []byte(strings.Join(a.Paths(), "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	if err := os.RemoveAll(kroot); err != nil {
		return err
	}
	os.RemoveAll(kdir)
	return os.Rename(tmp, kdir)
}
