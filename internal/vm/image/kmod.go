package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/debcache"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
)

// Modules the Debian kernel lacks (siw: CONFIG_RDMA_SIW is not set) or
// that a run wants changed (rdma_rxe with a known extra cost) are built
// out of tree from Debian's own kernel source for the guest's kernel:
// linux-source-X.Y (the whole tree as a tar.xz, of which only the
// module's directory is unpacked), linux-headers-KVER with its -common
// part and linux-kbuild-X.Y (the configuration, Module.symvers and the
// build scripts), all of the kernel package's version, so that the
// module's vermagic and symbol versions are the guest kernel's. The
// headers name gcc-12, Debian bookworm's compiler. The four packages are
// about 150 MB, almost all of it the source tarball, so the built module
// is cached and the packages are removed once it is built (docs/vm.md
// says what a first build costs).

// modulesFormat changes whenever what a module build produces changes.
const modulesFormat = "rxevm-modules-1"

// A moduleSource is one out-of-tree build: a directory of the kernel
// tree, the configuration symbol that turns its module on, and an
// optional change to its sources.
type moduleSource struct {
	Dir    string                 // e.g. drivers/infiniband/sw/siw
	Config string                 // e.g. CONFIG_RDMA_SIW
	Module string                 // the .ko it builds, e.g. siw
	Patch  string                 // names the change (part of the cache key); "" for stock
	Apply  func(dir string) error // makes the change in the unpacked directory
}

// modulesCacheDir is where built modules are cached: beside the base
// cache, not in it, because building a new base prunes every other
// directory there.
func modulesCacheDir(cacheDir string) string {
	return strings.TrimSuffix(cacheDir, "/") + "-modules"
}

// kernelDebOf finds the kernel .deb the base was built from and returns
// its path and package (name and version, from the file's name).
func kernelDebOf(cacheDir string, base *Base) (string, debcache.Package, error) {
	debs, _ := filepath.Glob(filepath.Join(cacheDir, "debs", "linux-image-*.deb"))
	for _, d := range debs {
		f := strings.Split(strings.TrimSuffix(filepath.Base(d), ".deb"), "_")
		if len(f) != 3 {
			continue
		}
		// The base holds the modules of exactly one kernel version.
		if kver := strings.TrimPrefix(f[0], "linux-image-"); base.Files["usr/lib/modules/"+kver] {
			return d, debcache.Package{Name: f[0], Version: strings.ReplaceAll(f[1], "%3a", ":")}, nil
		}
	}
	return "", debcache.Package{}, fmt.Errorf("the kernel package of %s is not in %s/debs (remove %s to rebuild it)", base.Dir, cacheDir, base.Dir)
}

// sourcePackages returns the Debian packages an out-of-tree build for the
// kernel package k (linux-image-KVER at version V) needs, all at V.
func sourcePackages(k debcache.Package) ([]debcache.Package, error) {
	kver := strings.TrimPrefix(k.Name, "linux-image-")
	abi, _, ok := strings.Cut(kver, "-amd64")
	series := strings.Join(strings.SplitN(k.Version, ".", 3)[:min(2, strings.Count(k.Version, ".")+1)], ".")
	if !ok || abi == "" || strings.Count(series, ".") != 1 {
		return nil, fmt.Errorf("kernel package %s %s: want linux-image-X.Y.Z-N-amd64 at version X.Y.*", k.Name, k.Version)
	}
	var pkgs []debcache.Package
	for _, n := range []string{"linux-source-" + series, "linux-headers-" + kver, "linux-headers-" + abi + "-common", "linux-kbuild-" + series} {
		p := debcache.Package{Name: n, Version: k.Version}
		if strings.HasPrefix(n, "linux-source-") || strings.HasSuffix(n, "-common") {
			p.Arch = "all"
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// buildModule returns the path of src's module built for the kernel
// package k, building it when it is not cached. The caller holds the base
// cache lock, which serialises builders.
func buildModule(ctx context.Context, cacheDir string, k debcache.Package, src moduleSource, logf func(string, ...any)) (string, error) {
	dir := modulesCacheDir(cacheDir)
	h := sha256.New()
	fmt.Fprintln(h, modulesFormat, k.Name, k.Version, src.Dir, src.Config, src.Module, src.Patch)
	key := src.Module + "-" + hex.EncodeToString(h.Sum(nil))[:16]
	ko := filepath.Join(dir, key, src.Module+".ko")
	if _, err := os.Stat(ko); err == nil {
		return ko, nil
	}
	if err := debcache.Claim(dir, logf); err != nil {
		return "", fmt.Errorf("module cache: %w", err)
	}
	for _, tool := range []string{"make", "gcc-12", "tar", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("building %s.ko for the guest kernel needs %s: apt-get install make gcc-12 xz-utils", src.Module, tool)
		}
	}
	pkgs, err := sourcePackages(k)
	if err != nil {
		return "", err
	}
	start := time.Now()
	debDir := filepath.Join(dir, "debs")
	if err := debcache.Download(ctx, debDir, pkgs, logf); err != nil {
		return "", err
	}
	logf("module %s: kernel source downloaded in %.1f s", src.Module, time.Since(start).Seconds())
	tmp := filepath.Join(dir, key+".tmp")
	os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	built, err := compileModule(ctx, tmp, debDir, k, pkgs, src)
	if err != nil {
		return "", fmt.Errorf("building %s.ko from %s: %w", src.Module, pkgs[0].Name, err)
	}
	out := filepath.Join(dir, key)
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(built, ko); err != nil {
		return "", err
	}
	logf("module %s built in %.1f s (download included): %s", src.Module, time.Since(start).Seconds(), ko)
	// 153 MB of source that the cached module no longer needs; another
	// module's build downloads them again (seconds).
	debcache.PruneDebs(dir, nil)
	return ko, nil
}

// compileModule unpacks the headers and the module's directory of the
// source into tmp, applies src's change, runs kbuild and checks that the
// module was built for k's kernel. It returns the .ko's path.
func compileModule(ctx context.Context, tmp, debDir string, k debcache.Package, pkgs []debcache.Package, src moduleSource) (string, error) {
	root := filepath.Join(tmp, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	if err := debcache.Extract(ctx, debDir, pkgs, root); err != nil {
		return "", err
	}
	kver := strings.TrimPrefix(k.Name, "linux-image-")
	series := strings.TrimPrefix(pkgs[0].Name, "linux-source-")
	tarball := filepath.Join(root, "usr/src", "linux-source-"+series+".tar.xz")
	member := "linux-source-" + series + "/" + src.Dir
	if out, err := exec.CommandContext(ctx, "tar", "-xJf", tarball, "-C", tmp, member).CombinedOutput(); err != nil {
		return "", fmt.Errorf("tar -xJf %s %s: %v\n%s", filepath.Base(tarball), member, err, out)
	}
	os.Remove(tarball)
	mod := filepath.Join(tmp, member)
	if src.Apply != nil {
		if err := src.Apply(mod); err != nil {
			return "", fmt.Errorf("changing %s (%s): %w", src.Dir, src.Patch, err)
		}
	}
	// The flavour's Makefile includes the common one by its installed
	// path, /usr/src/...; here it lies under root.
	hdr := filepath.Join(root, "usr/src", "linux-headers-"+kver)
	mk := filepath.Join(hdr, "Makefile")
	b, err := os.ReadFile(mk)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(mk, []byte(strings.ReplaceAll(string(b), "include /usr/src/", "include "+root+"/usr/src/")), 0o644); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", hdr, "M="+mod, src.Config+"=m",
		fmt.Sprintf("-j%d", runtime.NumCPU()), "modules")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make modules: %v\n%s", err, out)
	}
	ko := filepath.Join(mod, src.Module+".ko")
	mi, err := kernel.ReadModinfo(ko)
	if err != nil {
		return "", err
	}
	if mi.Release() != kver {
		return "", fmt.Errorf("%s.ko was built for %q, not the guest's %s (vermagic %q)", src.Module, mi.Release(), kver, mi.Vermagic)
	}
	return ko, nil
}
