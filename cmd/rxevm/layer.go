package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
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

// layerModules are loaded on every fleet node besides rdmaModules and
// ninepModules: the NIC and the netem qdisc for an injected delay.
var layerModules = []string{"virtio_net", "sch_netem"}

// slurmLinks are the links the Debian packages make with update-alternatives
// in their postinst scripts, which dpkg -x does not run.
var slurmLinks = map[string]string{
	"/usr/sbin/slurmd":     "slurmd-wlm",
	"/usr/sbin/slurmctld":  "slurmctld-wlm",
	"/usr/sbin/slurmstepd": "slurmstepd-wlm",
}

// A fleetLayer is the cached fleet layer.
type fleetLayer struct {
	cpio    string          // layer.cpio
	modules []string        // guest paths of every module a fleet node loads, in order
	files   map[string]bool // guest paths in layer.cpio
}

// layerCacheDir is where the layer is cached: beside the base cache, not in
// it, because building a new base prunes every other directory there.
func layerCacheDir(cacheDir string) string {
	return strings.TrimSuffix(cacheDir, "/") + "-fleet"
}

// loadLayer returns the fleet layer that goes with base, building it when
// needed. The caller holds the base cache lock, which serialises builders.
func loadLayer(ctx context.Context, cacheDir string, base *guestBase, busybox string, logf logFunc) (*fleetLayer, error) {
	dir := layerCacheDir(cacheDir)
	kernelDeb, pkgs, err := layerInputs(ctx, cacheDir, base)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	fmt.Fprintln(h, layerFormat, filepath.Base(base.dir), kernelDeb)
	for _, p := range pkgs {
		fmt.Fprintf(h, "%s=%s\n", p.name, p.version)
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	if err := claimCache(dir, logf); err != nil {
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
	pruneVersions(dir, key, nil)
	return openLayer(kdir)
}

// layerInputs finds the kernel .deb the base was built from and the
// candidate versions of the layer's packages.
func layerInputs(ctx context.Context, cacheDir string, base *guestBase) (string, []debPackage, error) {
	debs, _ := filepath.Glob(filepath.Join(cacheDir, "debs", "linux-image-*.deb"))
	var kernelDeb string
	for _, d := range debs {
		// The base holds the modules of exactly one kernel version.
		kver := strings.TrimPrefix(strings.SplitN(filepath.Base(d), "_", 2)[0], "linux-image-")
		if base.files["usr/lib/modules/"+kver] {
			kernelDeb = d
		}
	}
	if kernelDeb == "" {
		return "", nil, fmt.Errorf("fleet layer: the kernel package of %s is not in %s/debs (remove %s to rebuild it)", base.dir, cacheDir, base.dir)
	}
	out, err := exec.CommandContext(ctx, "apt-cache", append([]string{"policy"}, layerPackages...)...).Output()
	if err != nil {
		return "", nil, fmt.Errorf("apt-cache policy: %v", err)
	}
	cand := parsePolicy(out)
	var pkgs []debPackage
	for _, n := range layerPackages {
		v := cand[n]
		if v == "" || v == "(none)" {
			return "", nil, fmt.Errorf("apt knows no candidate version of %s (apt-get update?)", n)
		}
		pkgs = append(pkgs, debPackage{n, v})
	}
	return kernelDeb, pkgs, nil
}

// openLayer opens a complete layer directory.
func openLayer(dir string) (*fleetLayer, error) {
	mods, err := os.ReadFile(filepath.Join(dir, "modules"))
	if err != nil {
		return nil, err
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		return nil, err
	}
	l := &fleetLayer{cpio: filepath.Join(dir, "layer.cpio"), files: map[string]bool{}}
	if _, err := os.Stat(l.cpio); err != nil {
		return nil, err
	}
	l.modules = strings.Fields(string(mods))
	for _, p := range strings.Split(string(manifest), "\n") {
		if p != "" {
			l.files[p] = true
		}
	}
	return l, nil
}

// buildLayer unpacks the layer's packages and the kernel's modules, and
// writes layer.cpio (what the base lacks), the module load order and the
// manifest into kdir, by way of a temporary directory.
func buildLayer(ctx context.Context, dir, kdir, kernelDeb string, pkgs []debPackage, base *guestBase, busybox string, logf logFunc) error {
	debDir := filepath.Join(dir, "debs")
	if err := download(ctx, debDir, pkgs, logf); err != nil {
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
	for _, p := range pkgs {
		if out, err := exec.CommandContext(ctx, "dpkg", "-x", filepath.Join(debDir, debFile(p)), root).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg -x %s: %v\n%s", debFile(p), err, out)
		}
	}
	kroot := filepath.Join(tmp, "kernel")
	if err := os.MkdirAll(kroot, 0o755); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "sh", "-c", `dpkg --fsys-tarfile "$1" | tar -x -C "$2" ./lib/modules`, "sh", kernelDeb, kroot).CombinedOutput(); err != nil {
		return fmt.Errorf("unpacking the modules of %s: %v\n%s", kernelDeb, err, out)
	}
	kvers, _ := os.ReadDir(filepath.Join(kroot, "lib", "modules"))
	if len(kvers) != 1 {
		return fmt.Errorf("%s: want one kernel version under lib/modules, found %d", kernelDeb, len(kvers))
	}
	kver := kvers[0].Name()
	if out, err := exec.CommandContext(ctx, busybox, "depmod", "-b", kroot, kver).CombinedOutput(); err != nil {
		return fmt.Errorf("busybox depmod: %v\n%s", err, out)
	}

	a := newArchive()
	skip := func(rel string) bool {
		return rel == "usr/share" || rel == "etc/init.d" || rel == "etc/default" || rel == "etc/logrotate.d"
	}
	if err := a.hostTree("/", root, skip); err != nil {
		return err
	}
	for p, target := range slurmLinks {
		a.symlink(p, target)
	}
	mods, err := layerModuleFiles(a, kroot, kver, base)
	if err != nil {
		return err
	}
	libPath := strings.Join([]string{
		filepath.Join(root, "usr/lib/x86_64-linux-gnu"),
		filepath.Join(root, "usr/lib/x86_64-linux-gnu/slurm-wlm"),
	}, ":")
	if err := addLayerLibs(ctx, a, root, libPath, base); err != nil {
		return err
	}
	if err := a.writeFile(filepath.Join(tmp, "layer.cpio")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "modules"), []byte(strings.Join(mods, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest"), []byte(strings.Join(a.paths(), "\n")+"\n"), 0o644); err != nil {
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

// layerModuleFiles adds the modules a fleet node loads that the base lacks
// and returns the guest paths of all of them, in load order.
func layerModuleFiles(a *archive, kroot, kver string, base *guestBase) ([]string, error) {
	mdir := filepath.Join(kroot, "lib", "modules", kver)
	dep, err := os.Open(filepath.Join(mdir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	defer dep.Close()
	builtin, err := os.Open(filepath.Join(mdir, "modules.builtin"))
	if err != nil {
		return nil, err
	}
	defer builtin.Close()
	ix, err := parseModulesDep(dep, builtin)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range append(append(append([]string{}, rdmaModules...), ninepModules...), layerModules...) {
		if n != "veth" && n != "dummy" { // a fleet node's rxe0 sits on its NIC
			names = append(names, n)
		}
	}
	files, err := ix.loadOrder(names)
	if err != nil {
		return nil, err
	}
	var guest []string
	for _, f := range files {
		g := "/usr/lib/modules/" + kver + "/" + f
		if !base.files[guestPath(g)] {
			if err := a.hostFile(g, filepath.Join(mdir, f)); err != nil {
				return nil, err
			}
		}
		guest = append(guest, g)
	}
	return guest, nil
}

// addLayerLibs adds the host libraries the layer's ELF files need that
// neither the layer's packages nor the base provide.
func addLayerLibs(ctx context.Context, a *archive, root, libPath string, base *guestBase) error {
	var files []string
	for _, p := range a.paths() {
		if e := a.entries[p]; e.src != "" && strings.HasPrefix(e.src, root+"/") {
			files = append(files, e.src)
		}
	}
	r, err := ldd(ctx, libPath, files)
	if err != nil {
		return err
	}
	for _, lib := range r.libs {
		gp := guestLibPath(lib)
		if strings.HasPrefix(lib.path, root+"/") || a.has(gp) || base.files[guestPath(gp)] {
			continue
		}
		if err := a.hostFile(gp, lib.path); err != nil {
			return err
		}
	}
	return nil
}
