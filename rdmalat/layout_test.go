package rdmalat

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// TestLayout: the halves are a page apart for small messages (perftest's
// cycle buffer), rounded to the cache line above a page, and UD's payload
// is cache-line aligned after its GRH.
func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		name              string
		op                spec.Op
		tr                spec.Transport
		size, page, line  int
		recv, total, rlen int
	}{
		{"2 B write: a page apart", spec.Write, spec.RC, 2, 4096, 64, 4096, 8192, 0},
		{"4 KiB write", spec.Write, spec.RC, 4096, 4096, 64, 4096, 8192, 0},
		{"above a page: the line", spec.Write, spec.RC, 5000, 4096, 64, 5056, 10112, 0},
		{"128 B lines (POWER)", spec.Write, spec.RC, 5000, 4096, 128, 5120, 10240, 0},
		{"64 KiB pages", spec.Send, spec.RC, 64, 65536, 128, 65536, 131072, 64},
		{"UD send: GRH then an aligned payload", spec.Send, spec.UD, 2, 4096, 64, 4160, 8256, 42},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := layoutOn(tc.op, tc.tr, tc.size, tc.page, tc.line)
			assert.Equal(t, 0, l.send)
			assert.Equal(t, tc.recv, l.recv)
			assert.Equal(t, tc.total, l.total)
			assert.Equal(t, tc.rlen, l.recvLen)
			assert.Zero(t, l.recv%tc.line, "payload cache-line aligned")
			assert.GreaterOrEqual(t, l.recv-l.send, tc.page, "halves a page apart at least")
		})
	}
}

func TestCacheLineOf(t *testing.T) {
	f := func(s string) fstest.MapFS {
		return fstest.MapFS{"sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size": {Data: []byte(s)}}
	}
	assert.Equal(t, 128, cacheLineOf(f("128\n")))
	assert.Equal(t, 64, cacheLineOf(f("64\n")))
	assert.Equal(t, 64, cacheLineOf(f("0\n")), "nonsense: perftest's default")
	assert.Equal(t, 64, cacheLineOf(f("96\n")), "not a power of two")
	assert.Equal(t, 64, cacheLineOf(fstest.MapFS{}), "not shown")
}
