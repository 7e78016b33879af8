package image

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
	"github.com/rdmabench/rdmabench/internal/vm/debcache"
)

// kernelMeta is the Debian package whose dependency names the kernel.
const kernelMeta = "linux-image-amd64"

// guestPackages are the Debian packages unpacked into the guest besides the
// kernel: libibverbs with its providers and tools, rdma_cm, perftest, and
// iproute2 for ip and rdma.
var guestPackages = []string{
	"libibverbs1", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils", "librdmacm1",
	"libibumad3", "perftest", "iproute2", "libnl-3-200", "libnl-route-3-200", "libpci3",
}

// resolvePackages asks apt for the kernel package linux-image-amd64 depends on
// and the candidate version of every guest package, running apt-get update
// once when apt has no answer.
//
// Asking apt takes 1-2 s, so the answer is kept in cacheDir/resolved together
// with a fingerprint of apt's package lists, and reused while they are
// unchanged.
func resolvePackages(ctx context.Context, cacheDir string, logf func(string, ...any)) ([]debcache.Package, error) {
	memo := filepath.Join(cacheDir, "resolved")
	fp := debcache.ListsFingerprint()
	if b, err := os.ReadFile(memo); err == nil && fp != "" {
		if pkgs, ok := parseResolved(b, fp); ok {
			return pkgs, nil
		}
	}
	pkgs, err := aptCandidates(ctx)
	if err == nil {
		atomicfile.WriteFile(memo, formatResolved(pkgs, debcache.ListsFingerprint()), 0o644)
		return pkgs, nil
	}
	logf("%v; running apt-get update", err)
	if err := debcache.Update(ctx); err != nil {
		return nil, err
	}
	pkgs, err = aptCandidates(ctx)
	if err == nil {
		atomicfile.WriteFile(memo, formatResolved(pkgs, debcache.ListsFingerprint()), 0o644)
	}
	return pkgs, err
}

// aptCandidates resolves the kernel package and the guest packages' versions.
func aptCandidates(ctx context.Context) ([]debcache.Package, error) {
	kernel, err := debcache.KernelPackage(ctx, kernelMeta)
	if err != nil {
		return nil, err
	}
	return debcache.Candidates(ctx, append([]string{kernel}, guestPackages...))
}

// formatResolved writes the resolved packages: the fingerprint on the first
// line, then "name version" lines, kernel first.
func formatResolved(pkgs []debcache.Package, fp string) []byte {
	var b strings.Builder
	b.WriteString(fp + "\n")
	for _, p := range pkgs {
		b.WriteString(p.Name + " " + p.Version + "\n")
	}
	return []byte(b.String())
}

// parseResolved reads what formatResolved wrote, if its fingerprint is fp.
func parseResolved(b []byte, fp string) ([]debcache.Package, bool) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2+len(guestPackages) || lines[0] != fp {
		return nil, false
	}
	var pkgs []debcache.Package
	for i, l := range lines[1:] {
		name, ver, ok := strings.Cut(l, " ")
		if !ok || i > 0 && name != guestPackages[i-1] {
			return nil, false
		}
		pkgs = append(pkgs, debcache.Package{Name: name, Version: ver})
	}
	return pkgs, true
}
