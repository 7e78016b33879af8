package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/env"
)

// cacheFormat changes whenever the layout of the cached guest changes, so
// that a new rxevm rebuilds caches made by an old one.
const cacheFormat = "rxevm-cache-1"

// kernelMeta is the Debian package whose dependency names the kernel.
const kernelMeta = "linux-image-amd64"

// guestPackages are the Debian packages unpacked into the guest besides the
// kernel: libibverbs with its providers and tools, rdma_cm, perftest, and
// iproute2 for ip and rdma.
var guestPackages = []string{
	"libibverbs1", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils", "librdmacm1",
	"libibumad3", "perftest", "iproute2", "libnl-3-200", "libnl-route-3-200", "libpci3",
}

// A guestBase is the cached, run-independent part of the guest.
type guestBase struct {
	dir    string          // cache directory of this version
	kernel string          // vmlinuz
	initrd string          // base.cpio: busybox, modules, libraries, tools, /init
	files  map[string]bool // guest paths in base.cpio (no leading slash)
}

// defaultCacheDir returns $RDMABENCH_VM_CACHE, or rdmabench/rxevm under the
// user cache directory ($XDG_CACHE_HOME or ~/.cache).
func defaultCacheDir() (string, error) {
	if d := os.Getenv(env.VarVMCache); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: set RDMABENCH_VM_CACHE: %w", err)
	}
	return filepath.Join(d, "rdmabench", "rxevm"), nil
}

// lockCache claims dir as an rxevm cache (claimCache: a directory holding
// anything else is refused) and takes an exclusive flock on dir/lock,
// waiting (and saying so) while another rxevm holds it. Closing the returned file releases it.
func lockCache(ctx context.Context, dir string, logf logFunc) (*os.File, error) {
	if err := claimCache(dir, logf); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for waited := false; ; waited = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if !waited {
			logf("waiting for another rxevm to finish with the cache %s", dir)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// loadBase returns the cached guest for the current package versions,
// building it first when needed. The caller must hold the cache lock.
func loadBase(ctx context.Context, cacheDir, busybox string, logf logFunc) (*guestBase, error) {
	pkgs, err := resolvePackages(ctx, cacheDir, logf)
	if err != nil {
		if b, err2 := lastBase(cacheDir); err2 == nil {
			logf("warning: %v; using the last cached guest %s", err, b.dir)
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
	os.WriteFile(filepath.Join(cacheDir, "current"), []byte(key+"\n"), 0o644)
	pruneCache(cacheDir, key, pkgs)
	return openBase(dir)
}

// openBase opens a complete cache directory.
func openBase(dir string) (*guestBase, error) {
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		return nil, err
	}
	b := &guestBase{
		dir:    dir,
		kernel: filepath.Join(dir, "vmlinuz"),
		initrd: filepath.Join(dir, "base.cpio"),
		files:  map[string]bool{},
	}
	for _, p := range strings.Split(string(manifest), "\n") {
		if p != "" {
			b.files[p] = true
		}
	}
	for _, f := range []string{b.kernel, b.initrd} {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// lastBase opens the most recently built cache, for use when apt cannot say
// what the current versions are (no package lists, no network).
func lastBase(cacheDir string) (*guestBase, error) {
	key, err := os.ReadFile(filepath.Join(cacheDir, "current"))
	if err != nil {
		return nil, err
	}
	return openBase(filepath.Join(cacheDir, strings.TrimSpace(string(key))))
}

// A debPackage is a package name and the version apt would download.
type debPackage struct {
	name, version string
}

// resolvePackages asks apt for the kernel package linux-image-amd64 depends on
// and the candidate version of every guest package, running apt-get update
// once when apt has no answer.
//
// Asking apt takes 1-2 s, so the answer is kept in cacheDir/resolved together
// with a fingerprint of apt's package lists, and reused while they are
// unchanged.
func resolvePackages(ctx context.Context, cacheDir string, logf logFunc) ([]debPackage, error) {
	memo := filepath.Join(cacheDir, "resolved")
	fp := aptListsFingerprint()
	if b, err := os.ReadFile(memo); err == nil && fp != "" {
		if pkgs, ok := parseResolved(b, fp); ok {
			return pkgs, nil
		}
	}
	pkgs, err := aptCandidates(ctx)
	if err == nil {
		os.WriteFile(memo, formatResolved(pkgs, aptListsFingerprint()), 0o644)
		return pkgs, nil
	}
	logf("%v; running apt-get update", err)
	if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("apt-get update: %v\n%s", err, out)
	}
	pkgs, err = aptCandidates(ctx)
	if err == nil {
		os.WriteFile(memo, formatResolved(pkgs, aptListsFingerprint()), 0o644)
	}
	return pkgs, err
}

// aptLists is where apt keeps its package lists.
const aptLists = "/var/lib/apt/lists"

// aptListsFingerprint summarises the names, sizes and modification times of
// apt's package lists; "" when they cannot be read.
func aptListsFingerprint() string {
	ents, err := os.ReadDir(aptLists)
	if err != nil {
		return ""
	}
	h := sha256.New()
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		fmt.Fprintf(h, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// formatResolved writes the resolved packages: the fingerprint on the first
// line, then "name version" lines, kernel first.
func formatResolved(pkgs []debPackage, fp string) []byte {
	var b strings.Builder
	b.WriteString(fp + "\n")
	for _, p := range pkgs {
		b.WriteString(p.name + " " + p.version + "\n")
	}
	return []byte(b.String())
}

// parseResolved reads what formatResolved wrote, if its fingerprint is fp.
func parseResolved(b []byte, fp string) ([]debPackage, bool) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2+len(guestPackages) || lines[0] != fp {
		return nil, false
	}
	var pkgs []debPackage
	for i, l := range lines[1:] {
		name, ver, ok := strings.Cut(l, " ")
		if !ok || i > 0 && name != guestPackages[i-1] {
			return nil, false
		}
		pkgs = append(pkgs, debPackage{name, ver})
	}
	return pkgs, true
}

// aptCandidates resolves the package list with apt-cache.
func aptCandidates(ctx context.Context) ([]debPackage, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "depends", kernelMeta).Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache depends %s: %v (rxevm needs apt: run it on Debian bookworm)", kernelMeta, err)
	}
	kernel := kernelFromDepends(out)
	if kernel == "" {
		return nil, fmt.Errorf("apt-cache depends %s: no linux-image-*-amd64 dependency", kernelMeta)
	}
	names := append([]string{kernel}, guestPackages...)
	out, err = exec.CommandContext(ctx, "apt-cache", append([]string{"policy"}, names...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache policy: %v", err)
	}
	cand := parsePolicy(out)
	var pkgs []debPackage
	for _, n := range names {
		v := cand[n]
		if v == "" || v == "(none)" {
			return nil, fmt.Errorf("apt knows no candidate version of %s", n)
		}
		pkgs = append(pkgs, debPackage{n, v})
	}
	return pkgs, nil
}

// kernelFromDepends finds the linux-image-*-amd64 package in the output of
// apt-cache depends linux-image-amd64.
func kernelFromDepends(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if dep, ok := strings.CutPrefix(l, "Depends: "); ok &&
			strings.HasPrefix(dep, "linux-image-") && strings.HasSuffix(dep, "-amd64") {
			return dep
		}
	}
	return ""
}

// parsePolicy maps package names to their candidate versions in the output
// of apt-cache policy.
func parsePolicy(out []byte) map[string]string {
	m := map[string]string{}
	cur := ""
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && l[0] != ' ' && strings.HasSuffix(l, ":") {
			cur = strings.TrimSuffix(l, ":")
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Candidate: "); ok && cur != "" {
			m[cur] = v
		}
	}
	return m
}

// cacheKey names a cache by everything that goes into it: the package
// versions, the busybox binary, the host's libc (libraries not in the
// packages come from the host) and the cache format.
func cacheKey(pkgs []debPackage, busybox string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, cacheFormat)
	for _, p := range pkgs {
		fmt.Fprintf(h, "%s=%s\n", p.name, p.version)
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

// debFile returns the name apt-get download gives p's .deb (the epoch's
// colon is written %3a).
func debFile(p debPackage) string {
	return p.name + "_" + strings.ReplaceAll(p.version, ":", "%3a") + "_amd64.deb"
}

// download fetches the .deb files missing from debDir, running apt-get
// update once if apt-get download fails.
func download(ctx context.Context, debDir string, pkgs []debPackage, logf logFunc) error {
	if err := os.MkdirAll(debDir, 0o755); err != nil {
		return err
	}
	var want []string
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(debDir, debFile(p))); err != nil {
			want = append(want, p.name+"="+p.version)
		}
	}
	if len(want) == 0 {
		return nil
	}
	logf("downloading %s", strings.Join(want, " "))
	get := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"download", "-q"}, want...)...)
		cmd.Dir = debDir
		return cmd.CombinedOutput()
	}
	if out, err := get(); err != nil {
		logf("apt-get download failed (%v); running apt-get update and retrying", err)
		if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get update: %v\n%s", err, out)
		}
		if out2, err := get(); err != nil {
			return fmt.Errorf("apt-get download: %v\n%s%s", err, out, out2)
		}
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(debDir, debFile(p))); err != nil {
			return fmt.Errorf("apt-get download did not produce %s", debFile(p))
		}
	}
	return nil
}

// buildBase downloads and unpacks the packages and writes the kernel, the
// base initramfs and its manifest into dir, by way of a temporary directory
// renamed into place at the end.
func buildBase(ctx context.Context, cacheDir, dir string, pkgs []debPackage, busybox string, logf logFunc) error {
	debDir := filepath.Join(cacheDir, "debs")
	if err := download(ctx, debDir, pkgs, logf); err != nil {
		return err
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	logf("extracting %d packages", len(pkgs))
	for _, p := range pkgs {
		out, err := exec.CommandContext(ctx, "dpkg", "-x", filepath.Join(debDir, debFile(p)), root).CombinedOutput()
		if err != nil {
			return fmt.Errorf("dpkg -x %s: %v\n%s", debFile(p), err, out)
		}
	}
	kver := strings.TrimPrefix(pkgs[0].name, "linux-image-")
	if out, err := exec.CommandContext(ctx, busybox, "depmod", "-b", root, kver).CombinedOutput(); err != nil {
		return fmt.Errorf("busybox depmod: %v\n%s", err, out)
	}
	logf("building initramfs")
	a, err := baseArchive(ctx, root, kver, busybox)
	if err != nil {
		return err
	}
	if err := a.writeFile(filepath.Join(tmp, "base.cpio")); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(root, "boot", "vmlinuz-"+kver), filepath.Join(tmp, "vmlinuz")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest"), []byte(strings.Join(a.paths(), "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// pruneCache removes cache versions other than key and .deb files of
// versions no longer wanted; only names rxevm makes, only in a directory
// carrying its marker (pruneVersions).
func pruneCache(cacheDir, key string, pkgs []debPackage) {
	keep := map[string]bool{}
	for _, p := range pkgs {
		keep[debFile(p)] = true
	}
	pruneVersions(cacheDir, key, keep)
}
