package image

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
	"github.com/rdmabench/rdmabench/internal/vm/debcache"
	"github.com/rdmabench/rdmabench/internal/vm/guest"
	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
	"github.com/rdmabench/rdmabench/internal/vm/kernel"
)

// cacheFormat changes whenever the layout of the cached guest changes, so
// that a new rxevm rebuilds caches made by an old one.
const cacheFormat = "rxevm-cache-6" // 2: /init mounts the instruction counts (-insns); 3: sch_netem in the single VM; 4: /init runs the siw layer's script (-siw); 5: 8021q in the single VM; 6: virtio_net and rxe2 for -numa2

// A Base is the cached, run-independent part of the guest.
type Base struct {
	Dir    string          // cache directory of this version
	Kernel string          // vmlinuz
	Initrd string          // base.cpio: busybox, modules, libraries, tools, /init
	Files  map[string]bool // guest paths in base.cpio (no leading slash)
}

// LoadBase returns the cached guest for the current package versions,
// building it first when needed. The caller must hold the cache lock.
func LoadBase(ctx context.Context, cacheDir, busybox string, logf func(string, ...any)) (*Base, error) {
	pkgs, err := resolvePackages(ctx, cacheDir, logf)
	if err != nil {
		if b, err2 := lastBase(cacheDir); err2 == nil {
			logf("warning: %v; using the last cached guest %s", err, b.Dir)
			return b, nil
		}
		return nil, err
	}
	key, err := cacheKey(pkgs, busybox)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cacheDir, key)
	if b, err := openBase(dir); err == nil {
		return b, nil
	}
	start := time.Now()
	if err := buildBase(ctx, cacheDir, dir, pkgs, busybox, logf); err != nil {
		return nil, err
	}
	logf("guest cache ready in %.1f s: %s", time.Since(start).Seconds(), dir)
	atomicfile.WriteFile(filepath.Join(cacheDir, "current"), []byte(key+"\n"), 0o644)
	debcache.Prune(cacheDir, key)
	debcache.PruneDebs(cacheDir, pkgs)
	return openBase(dir)
}

// openBase opens a complete cache directory.
func openBase(dir string) (*Base, error) {
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		return nil, err
	}
	b := &Base{
		Dir:    dir,
		Kernel: filepath.Join(dir, "vmlinuz"),
		Initrd: filepath.Join(dir, "base.cpio"),
		Files:  map[string]bool{},
	}
	for _, p := range strings.Split(string(manifest), "\n") {
		if p != "" {
			b.Files[p] = true
		}
	}
	for _, f := range []string{b.Kernel, b.Initrd} {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// lastBase opens the most recently built cache, for use when apt cannot say
// what the current versions are (no package lists, no network).
func lastBase(cacheDir string) (*Base, error) {
	key, err := os.ReadFile(filepath.Join(cacheDir, "current"))
	if err != nil {
		return nil, err
	}
	return openBase(filepath.Join(cacheDir, strings.TrimSpace(string(key))))
}

// cacheKey names a cache by everything that goes into it: the package
// versions, the busybox binary, the host's libc (libraries not in the
// packages come from the host) and the cache format.
func cacheKey(pkgs []debcache.Package, busybox string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, cacheFormat)
	// The base's /init is written from this template: a change to it is a
	// new guest without a bump of cacheFormat.
	fmt.Fprintln(h, guest.InitScript(nil, nil, nil))
	for _, p := range pkgs {
		fmt.Fprintf(h, "%s=%s\n", p.Name, p.Version)
	}
	bb, err := os.Open(busybox)
	if err != nil {
		return "", err
	}
	defer bb.Close()
	if _, err := io.Copy(h, bb); err != nil {
		return "", err
	}
	libc, _ := exec.Command("dpkg-query", "-W", "-f=${Version}", "libc6").Output()
	fmt.Fprintf(h, "libc6=%s\n", libc)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildBase downloads and unpacks the packages and writes the kernel, the
// base initramfs and its manifest into dir, by way of a temporary directory
// renamed into place at the end.
func buildBase(ctx context.Context, cacheDir, dir string, pkgs []debcache.Package, busybox string, logf func(string, ...any)) error {
	debDir := filepath.Join(cacheDir, "debs")
	if err := debcache.Download(ctx, debDir, pkgs, logf); err != nil {
		return err
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	logf("extracting %d packages", len(pkgs))
	if err := debcache.Extract(ctx, debDir, pkgs, root); err != nil {
		return err
	}
	kver := strings.TrimPrefix(pkgs[0].Name, "linux-image-")
	if err := depmod(ctx, busybox, root, kver); err != nil {
		return err
	}
	logf("building initramfs")
	a, err := baseArchive(ctx, root, kver, busybox)
	if err != nil {
		return err
	}
	if err := a.WriteFile(filepath.Join(tmp, "base.cpio")); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(root, "boot", "vmlinuz-"+kver), filepath.Join(tmp, "vmlinuz")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest"), []byte(strings.Join(a.Paths(), "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// baseArchive lays out the guest's base initramfs from the unpacked
// packages in root: the package files (without docs and most of the kernel),
// the modules /init loads, busybox and its applets, the host libraries the
// binaries need, a few /etc files and /init.
func baseArchive(ctx context.Context, root, kver, busybox string) (*initramfs.Archive, error) {
	a := initramfs.New()
	for _, d := range []string{"dev", "proc", "sys", "run", "root", "etc", "usr/bin", "usr/sbin", "usr/lib64", "rxevm"} {
		a.Dir(d, 0o755)
	}
	a.Dir("tmp", 0o1777)
	a.MergedUsrLinks()
	a.CharDev("dev/console", 0o600, 5, 1)
	a.CharDev("dev/null", 0o666, 1, 3)

	skip := func(rel string) bool {
		switch rel {
		case "boot", "lib/modules", "usr/lib/modules", "usr/share", "etc/init.d":
			return true
		}
		return false
	}
	if err := a.HostTree("/", root, skip); err != nil {
		return nil, err
	}
	mods, err := kernel.OpenModules(filepath.Join(root, "lib", "modules", kver))
	if err != nil {
		return nil, err
	}
	rdma, ninep, nic, err := addVMModules(a, mods)
	if err != nil {
		return nil, err
	}
	if err := addBusybox(a, busybox); err != nil {
		return nil, err
	}
	libPath := strings.Join([]string{
		filepath.Join(root, "usr/lib/x86_64-linux-gnu"),
		filepath.Join(root, "lib/x86_64-linux-gnu"),
	}, ":")
	if err := addLibs(ctx, a, a.HostSources(), libPath, root, nil); err != nil {
		return nil, err
	}
	a.File("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n"))
	a.File("etc/group", 0o644, []byte("root:x:0:\n"))
	a.File("etc/hosts", 0o644, []byte("127.0.0.1\tlocalhost\n192.168.77.1\trxe0\n192.168.77.2\trxe1\n"))
	a.File("init", 0o755, []byte(guest.InitScript(rdma, ninep, nic)))
	return a, nil
}

// addBusybox adds busybox and a symbolic link for each of its applets that
// the packages do not provide (iproute2's ip wins over busybox's).
func addBusybox(a *initramfs.Archive, busybox string) error {
	if err := a.HostFile("/usr/bin/busybox", busybox); err != nil {
		return err
	}
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("busybox --list: %v", err)
	}
	s := bufio.NewScanner(bytes.NewReader(out))
	var applets []string
	for s.Scan() {
		if n := strings.TrimSpace(s.Text()); n != "" && !strings.Contains(n, "/") {
			applets = append(applets, n)
		}
	}
	sort.Strings(applets)
	for _, n := range applets {
		if !a.Has("/usr/bin/"+n) && !a.Has("/usr/sbin/"+n) {
			a.Symlink("/usr/bin/"+n, "busybox")
		}
	}
	return nil
}
