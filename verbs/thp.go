package verbs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// thpDir is where Linux keeps its transparent huge page settings.
const thpDir = "/sys/kernel/mm/transparent_hugepage/"

// AllocMRTHP is AllocMR with the region in transparent huge pages: an
// anonymous mapping aligned to the PMD huge page size (hpage_pmd_size,
// 2 MiB on x86-64), its size rounded up to whole pages, madvise
// MADV_HUGEPAGE before the first touch. Unlike AllocMRHugePages it needs
// no reserved pages, but the kernel may fall back to small pages; it
// fails when transparent huge pages are off ("never") or when the kernel
// backed the region with fewer huge pages than asked (AnonHugePages in
// /proc/self/smaps), saying what to do.
func (pd *PD) AllocMRTHP(size int, access Access) (*MR, error) {
	const op = "madvise MADV_HUGEPAGE"
	mode, err := os.ReadFile(thpDir + "enabled")
	if err != nil {
		return nil, &Error{Op: op, Err: syscall.ENOTSUP, Detail: "the kernel has no transparent huge pages (" + thpDir + "enabled: CONFIG_TRANSPARENT_HUGEPAGE)"}
	}
	if thpOff(string(mode)) {
		return nil, &Error{Op: op, Err: syscall.ENOTSUP, Detail: "transparent huge pages are off (" + thpDir + "enabled reads " + strings.TrimSpace(string(mode)) + "): echo madvise > " + thpDir + "enabled"}
	}
	align := 2 << 20
	if b, err := os.ReadFile(thpDir + "hpage_pmd_size"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			align = n
		}
	}
	if size > 0 {
		size = (size + align - 1) / align * align
	}
	return pd.allocMR(size, access, func(n int) ([]byte, error) {
		mem, err := mmapTHP(n, align)
		if err != nil {
			return nil, err
		}
		huge, err := AnonHugeBytes(mem)
		if err == nil && huge < n {
			err = fmt.Errorf("the kernel backed %d of %d kB with transparent huge pages (AnonHugePages in /proc/self/smaps; memory too fragmented, or defrag off in %sdefrag): reserve huge pages instead (vm.nr_hugepages)", huge>>10, n>>10, thpDir)
		}
		if err != nil {
			_ = munmap(mem)
			return nil, err
		}
		return mem, nil
	})
}

// thpOff reports whether a transparent_hugepage/enabled line, such as
// "always [madvise] never", has never chosen.
func thpOff(enabled string) bool { return strings.Contains(enabled, "[never]") }

// AnonHugeBytes returns how many bytes of the mapping holding b's first
// byte are anonymous transparent huge pages (AnonHugePages in this
// process's /proc/self/smaps).
func AnonHugeBytes(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("verbs: AnonHugeBytes of an empty slice")
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	kb, err := smapsField(smaps, addrOf(b), "AnonHugePages:")
	return kb << 10, err
}

// smapsField reads field (in kB) of the mapping of smaps that holds addr.
func smapsField(smaps []byte, addr uint64, field string) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	in := false
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && addr >= l && addr < h
			continue
		}
		if v, ok := strings.CutPrefix(line, field); ok && in {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.Atoi(f[0])
		}
	}
	return 0, fmt.Errorf("verbs: no mapping holds %#x in /proc/self/smaps (or it has no %s)", addr, strings.TrimSuffix(field, ":"))
}
