package debcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// A Package is a package name and the version apt would download.
type Package struct {
	Name, Version string
	Arch          string // "" for amd64; "all" for architecture-independent ones (linux-source)
}

// DebFile returns the name apt-get download gives p's .deb (the epoch's
// colon is written %3a).
func DebFile(p Package) string {
	arch := p.Arch
	if arch == "" {
		arch = "amd64"
	}
	return p.Name + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_" + arch + ".deb"
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
		pkgs = append(pkgs, Package{Name: n, Version: v})
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

// Download fetches the packages missing from debDir with apt-get download.
// A .deb reaches debDir only whole: apt-get downloads into a temporary
// directory inside it, each file is checked against the size and SHA256
// of apt's index (apt-cache show) where the index has them, then renamed
// into place; so a file under its final name was complete, and a download
// cut short by a kill leaves only the temporary directory, which the next
// Download (under the cache lock) removes.
func Download(ctx context.Context, debDir string, pkgs []Package, logf func(format string, args ...any)) error {
	if err := os.MkdirAll(debDir, 0o755); err != nil {
		return err
	}
	sweepPartial(debDir, logf)
	var want []string
	var missing []Package
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(debDir, DebFile(p))); err != nil {
			want = append(want, p.Name+"="+p.Version)
			missing = append(missing, p)
		}
	}
	if len(want) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp(debDir, partialPrefix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logf("downloading %s", strings.Join(want, " "))
	get := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"download", "-q"}, want...)...)
		cmd.Dir = tmp
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
	idx := index(ctx, want)
	for _, p := range missing {
		got := filepath.Join(tmp, DebFile(p))
		if _, err := os.Stat(got); err != nil {
			return fmt.Errorf("apt-get download did not produce %s", DebFile(p))
		}
		if e, ok := idx[Package{Name: p.Name, Version: p.Version}]; ok {
			if err := e.check(got); err != nil {
				return fmt.Errorf("apt-get download of %s=%s: %w (a download cut short, or a mirror's damage: run rxevm again)", p.Name, p.Version, err)
			}
		} else {
			logf("apt's index has no size or SHA256 of %s=%s: taken as downloaded", p.Name, p.Version)
		}
		if err := os.Rename(got, filepath.Join(debDir, DebFile(p))); err != nil {
			return err
		}
	}
	return nil
}

// partialPrefix names Download's temporary directories inside debDir.
const partialPrefix = ".partial-"

// sweepPartial removes the temporary directories of downloads that were
// killed: Download runs under the cache lock, so none is in use.
func sweepPartial(debDir string, logf func(format string, args ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(debDir, partialPrefix+"*"))
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			logf("removing %s, left by a download that was cut short", d)
			os.RemoveAll(d)
		}
	}
}

// indexEntry is what apt's index says of one .deb.
type indexEntry struct {
	size   int64
	sha256 string
}

// check compares the file at path with e.
func (e indexEntry) check(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if n != e.size {
		return fmt.Errorf("%s is %d bytes, apt's index says %d", filepath.Base(path), n, e.size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); e.sha256 != "" && got != e.sha256 {
		return fmt.Errorf("%s has SHA256 %s, apt's index says %s", filepath.Base(path), got, e.sha256)
	}
	return nil
}

// index asks apt-cache show for the size and SHA256 of each name=version;
// what it cannot tell is left out.
func index(ctx context.Context, want []string) map[Package]indexEntry {
	out, _ := exec.CommandContext(ctx, "apt-cache", append([]string{"show", "--no-all-versions"}, want...)...).Output()
	return parseIndex(out)
}

// parseIndex reads apt-cache show's stanzas.
func parseIndex(out []byte) map[Package]indexEntry {
	idx := map[Package]indexEntry{}
	for stanza := range strings.SplitSeq(string(out), "\n\n") {
		var p Package
		var e indexEntry
		for line := range strings.SplitSeq(stanza, "\n") {
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			switch k {
			case "Package":
				p.Name = v
			case "Version":
				p.Version = v
			case "Size":
				e.size, _ = strconv.ParseInt(v, 10, 64)
			case "SHA256":
				e.sha256 = v
			}
		}
		if p.Name != "" && p.Version != "" && e.size > 0 {
			idx[p] = e
		}
	}
	return idx
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
