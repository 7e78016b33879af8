package artifacts

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forgedHlogLine is an interval line whose histogram header claims
// lowest..highest at digits, with an empty payload.
func forgedHlogLine(lowest, highest int64, digits int32) string {
	var header bytes.Buffer
	binary.Write(&header, binary.BigEndian, []int32{hdrhistogram.V2EncodingCookieBase | 0x10, 0, 0, digits})
	binary.Write(&header, binary.BigEndian, []int64{lowest, highest})
	binary.Write(&header, binary.BigEndian, 1.0)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(header.Bytes())
	zw.Close()
	var blob bytes.Buffer
	binary.Write(&blob, binary.BigEndian, []int32{hdrhistogram.V2CompressedEncodingCookieBase | 0x10, int32(z.Len())})
	blob.Write(z.Bytes())
	return "Tag=x,0.000,1.000,1.000," + base64.StdEncoding.EncodeToString(blob.Bytes()) + "\n"
}

func writeHlog(t testing.TB, text string) string {
	path := filepath.Join(t.TempDir(), "forged.hlog")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// TestReadHlogForgedHeader: a header that asks for a histogram of 1 to
// MaxInt64 at 5 digits (6 million counts, 49 MB) is refused before the
// log reader allocates it, and so is a log of many that each fit.
func TestReadHlogForgedHeader(t *testing.T) {
	assert.EqualValues(t, 28_672, countsLen(1, 100e9, 3), "this package's own histograms")
	// The library's own sizes (ByteSize: 68 bytes and 8 a count).
	for _, g := range []struct{ lo, hi, digits int64 }{{1, 100e9, 3}, {1, 1 << 30, 4}, {1000, 1e12, 2}, {7, 1 << 20, 5}} {
		h := hdrhistogram.New(g.lo, g.hi, int(g.digits))
		assert.EqualValues(t, (h.ByteSize()-68)/8, countsLen(g.lo, g.hi, int(g.digits)), "%+v", g)
	}
	wide := countsLen(1, math.MaxInt64, 5)
	require.Greater(t, wide, int64(maxHlogCounts))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadHlog(writeHlog(t, forgedHlogLine(1, math.MaxInt64, 5)))
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "forged.hlog:1: a histogram of 6160384 counts")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "the counts were not allocated")

	// Each within the bound, too many together.
	one := forgedHlogLine(1, 1<<30, 4) // 278,528 counts
	n := countsLen(1, 1<<30, 4)
	require.LessOrEqual(t, n, int64(maxHlogCounts))
	lines := int(maxHlogTotalCounts/n) + 1
	_, err = ReadHlog(writeHlog(t, "#[StartTime: 0.000]\n"+strings.Repeat(one, lines)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in all")
}

// FuzzReadHlog: an HDR log, whatever it holds, gives histograms within
// the bounds or an error; never a panic or an unbounded allocation.
func FuzzReadHlog(f *testing.F) {
	h := FromSamples([]int64{1000, 1200, 5000})
	dir := f.TempDir()
	path, err := WriteHlog(dir, "latency", "BenchmarkX", h)
	if err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(good))
	f.Add(forgedHlogLine(1, math.MaxInt64, 5))
	f.Add(forgedHlogLine(-5, 1000, 3))
	f.Add(forgedHlogLine(1, 1000, 9))
	f.Add("Tag=x\n#\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		hs, err := ReadHlog(writeHlog(t, in))
		if err != nil {
			return
		}
		total := int64(0)
		for _, h := range hs {
			total += countsLen(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		if total > maxHlogTotalCounts {
			t.Fatalf("%d counts read", total)
		}
	})
}
