package rdmalat

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// layout places the two halves in the buffer as perftest does: each half
// at least a page (perftest's cycle buffer, sysconf(_SC_PAGESIZE)) and
// rounded up to the cache line (its get_cache_line_size), so the send
// half and the receive half never share a page or a line, and an
// atomic's 8-byte word is aligned: the send half at 0, the receive half
// after it. On UD a receive starts with the 40-byte GRH: the receive half
// begins one cache line later and the GRH fills the end of that line, so
// the payload is cache-line aligned, as perftest places it.
type layout struct {
	send, recv int // offsets of the send half and of received payloads
	recvLen    int // length of each receive work request, GRH included; 0: zero-length
	total      int
}

// defaultCacheLine is perftest's DEF_CACHE_LINE_SIZE, taken when the
// host does not say.
const defaultCacheLine = 64

// hostGeometry is this host's page size and L1 data cache line, read once.
var hostGeometry = sync.OnceValues(func() (page, line int) {
	return os.Getpagesize(), cacheLineOf(os.DirFS("/"))
})

// cacheLineOf reads the L1 data cache line size as perftest does where
// sysconf(_SC_LEVEL1_DCACHE_LINESIZE) gives none (glibc reads it from the
// CPU; the kernel shows the same figure in sysfs), else 64.
func cacheLineOf(fsys fs.FS) int {
	b, err := fs.ReadFile(fsys, "sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")
	if err != nil {
		return defaultCacheLine
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 || n&(n-1) != 0 {
		return defaultCacheLine
	}
	return n
}

func layoutFor(op spec.Op, t spec.Transport, maxSize int) layout {
	page, line := hostGeometry()
	return layoutOn(op, t, maxSize, page, line)
}

func layoutOn(op spec.Op, t spec.Transport, maxSize, page, line int) layout {
	half := (max(maxSize, page) + line - 1) / line * line
	l := layout{recv: half, total: 2 * half}
	if t == spec.UD {
		l.recv += line
		l.total += line
	}
	switch op {
	case spec.Send, spec.SendImm:
		l.recvLen = maxSize
		if t == spec.UD {
			l.recvLen += spec.GRH
		}
	}
	return l
}
