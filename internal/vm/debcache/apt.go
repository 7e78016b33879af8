package debcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A Package is a package name and the version apt would download.
type Package struct {
	Name, Version string
}

// DebFile returns the name apt-get download gives p's .deb (the epoch's
// colon is written %3a).
func DebFile(p Package) string {
	return p.Name + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_amd64.deb"
}

// aptLists is where apt keeps its package lists.
const aptLists = "/var/lib/apt/lists"

// ListsFingerprint summarises the names, sizes and modification times of
// apt's package lists; "" when they cannot be read.
func ListsFingerprint() string {
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

// Update runs apt-get update.
func Update(ctx context.Context) error {
	if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %v\n%s", err, out)
	}
	return nil
}

// KernelPackage asks apt which linux-image-*-amd64 package meta (such as
// linux-image-amd64) depends on.
func KernelPackage(ctx context.Context, meta string) (string, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "depends", meta).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache depends %s: %v (rxevm needs apt: run it on Debian bookworm)", meta, err)
	}
	kernel := KernelFromDepends(out)
	if kernel == "" {
		return "", fmt.Errorf("apt-cache depends %s: no linux-image-*-amd64 dependency", meta)
	}
	return kernel, nil
}

// KernelFromDepends finds the linux-image-*-amd64 package in the output of
// apt-cache depends linux-image-amd64.
func KernelFromDepends(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if dep, ok := strings.CutPrefix(l, "Depends: "); ok &&
			strings.HasPrefix(dep, "linux-image-") && strings.HasSuffix(dep, "-amd64") {
			return dep
		}
	}
	return ""
}

// Candidates returns the version apt would install of each named package.
func Candidates(ctx context.Context, names []string) ([]Package, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", append([]string{"policy"}, names...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache policy: %v", err)
	}
	cand := ParsePolicy(out)
	var pkgs []Package
	for _, n := range names {
		v := cand[n]
		if v == "" || v == "(none)" {
			return nil, fmt.Errorf("apt knows no candidate version of %s (apt-get update?)", n)
		}
		pkgs = append(pkgs, Package{n, v})
	}
	return pkgs, nil
}

// ParsePolicy maps package names to their candidate versions in the output
// of apt-cache policy.
func ParsePolicy(out []byte) map[string]string {
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

// Download fetches the .deb files missing from debDir, running apt-get
// update once if apt-get download fails.
func Download(ctx context.Context, debDir string, pkgs []Package, logf func(format string, args ...any)) error {
	if err := os.MkdirAll(debDir, 0o755); err != nil {
		return err
	}
	var want []string
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(debDir, DebFile(p))); err != nil {
			want = append(want, p.Name+"="+p.Version)
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
		if err := Update(ctx); err != nil {
			return err
		}
		if out2, err := get(); err != nil {
			return fmt.Errorf("apt-get download: %v\n%s%s", err, out, out2)
		}
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(debDir, DebFile(p))); err != nil {
			return fmt.Errorf("apt-get download did not produce %s", DebFile(p))
		}
	}
	return nil
}

// Extract unpacks the downloaded packages pkgs from debDir into root with
// dpkg -x (no maintainer scripts run).
func Extract(ctx context.Context, debDir string, pkgs []Package, root string) error {
	for _, p := range pkgs {
		out, err := exec.CommandContext(ctx, "dpkg", "-x", filepath.Join(debDir, DebFile(p)), root).CombinedOutput()
		if err != nil {
			return fmt.Errorf("dpkg -x %s: %v\n%s", DebFile(p), err, out)
		}
	}
	return nil
}

// ExtractModules unpacks only lib/modules of the kernel package deb into
// dir and returns the one kernel release it holds.
func ExtractModules(ctx context.Context, deb, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := untarModules(ctx, deb, dir); err != nil {
		return "", fmt.Errorf("unpacking the modules of %s (a linux-image .deb?): %w", deb, err)
	}
	rels, _ := os.ReadDir(filepath.Join(dir, "lib", "modules"))
	if len(rels) != 1 {
		return "", fmt.Errorf("%s: want one kernel release under lib/modules, found %d", deb, len(rels))
	}
	return rels[0].Name(), nil
}

// untarModules runs dpkg --fsys-tarfile deb | tar -x -C dir ./lib/modules
// as two processes of its own, not through a shell, so that a cancelled
// ctx kills tar too and nothing writes into dir once it returns.
func untarModules(ctx context.Context, deb, dir string) error {
	var dpkgErr, tarErr bytes.Buffer
	dpkg := exec.CommandContext(ctx, "dpkg", "--fsys-tarfile", deb)
	dpkg.Stderr = &dpkgErr
	tar := exec.CommandContext(ctx, "tar", "-x", "-C", dir, "./lib/modules")
	tar.Stderr = &tarErr
	pipe, err := dpkg.StdoutPipe()
	if err != nil {
		return err
	}
	tar.Stdin = pipe
	if err := dpkg.Start(); err != nil {
		return err
	}
	if err := tar.Start(); err != nil {
		dpkg.Process.Kill()
		dpkg.Wait()
		return err
	}
	tarWait := tar.Wait()
	if tarWait != nil {
		dpkg.Process.Kill() // tar stopped reading: dpkg would block on the pipe
	}
	dpkgWait := dpkg.Wait()
	switch {
	case dpkgWait != nil:
		return fmt.Errorf("dpkg --fsys-tarfile: %v\n%s", dpkgWait, dpkgErr.Bytes())
	case tarWait != nil:
		return fmt.Errorf("tar -x ./lib/modules: %v\n%s", tarWait, tarErr.Bytes())
	}
	return nil
}
