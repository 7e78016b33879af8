package artifacts

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/latency"
)

// The cap keeps exactly the first max lines, wherever the writes split
// them, and says how many it dropped.
func TestCapWriter(t *testing.T) {
	var all strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&all, "%d.5\n", 10000+i)
	}
	text := all.String()
	for _, max := range []int64{0, 1, 7, 999, 1000, 5000} {
		for _, chunk := range []int{1, 5, 64, 4096, len(text)} {
			var out bytes.Buffer
			c := NewCapWriter(&out, max)
			for i := 0; i < len(text); i += chunk {
				n, err := c.Write([]byte(text[i:min(i+chunk, len(text))]))
				require.NoError(t, err)
				require.Equal(t, min(chunk, len(text)-i), n)
			}
			kept := min(max, 1000)
			want := strings.Join(strings.SplitAfter(text, "\n")[:kept], "")
			require.Equal(t, want, out.String(), "max %d chunk %d", max, chunk)
			assert.Equal(t, 1000-kept, c.Dropped(), "max %d chunk %d", max, chunk)
			if kept == 1000 {
				assert.Empty(t, c.Note())
			} else {
				assert.Equal(t, fmt.Sprintf("raw samples: wrote the first %d of 1000 (RDMABENCH_MAX_SAMPLES=%d); the histogram and statistics hold them all; raise RDMABENCH_MAX_SAMPLES to keep more", max, max), c.Note())
			}
		}
	}
}

// Behind the raw writer, as the benchmarks use it, the file ends at the cap
// with whole lines that ReadSamples reads back.
func TestCapWriterBehindRawWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latency"+SamplesExt)
	f, err := os.Create(path)
	require.NoError(t, err)
	c := NewCapWriter(f, 50_000)
	rec := latency.NewRecorder(true)
	rw := latency.NewRawWriter(c)
	rec.SetRaw(rw)
	for i := range 120_000 {
		rec.Record(int64(20000 + i%1000))
	}
	require.NoError(t, rw.Flush())
	require.NoError(t, f.Close())
	got, err := ReadSamples(path)
	require.NoError(t, err)
	require.Len(t, got, 50_000)
	assert.Equal(t, int64(10000), got[0])
	assert.Equal(t, int64(10000+49_999%1000/2), got[49_999])
	assert.Equal(t, int64(70_000), c.Dropped())
}

func TestEachSampleErrors(t *testing.T) {
	err := EachSample(strings.NewReader("10\n\n 12.5 \nx1\n"), "f", func(int64) {})
	assert.EqualError(t, err, `f:4: "x1" is not a sample in nanoseconds`)
	var got []int64
	require.NoError(t, EachSample(strings.NewReader("10\n0\n12.5\n7"), "f", func(v int64) { got = append(got, v) }))
	assert.Equal(t, []int64{10, 0, 12, 7}, got)
	// A latency is never negative: refused with the line's number.
	for _, neg := range []string{"-3", "-0.5", " -1 "} {
		got = nil
		err = EachSample(strings.NewReader("10\n"+neg+"\n12\n"), "f", func(v int64) { got = append(got, v) })
		assert.EqualError(t, err, fmt.Sprintf("f:2: %q: a negative sample; a latency is 0 ns or more (not a file of raw samples?)", neg))
		assert.Equal(t, []int64{10}, got, "nothing after the negative sample")
	}
	assert.Error(t, EachSample(strings.NewReader("1234567890123456789\n"), "f", func(int64) {}), "19 digits may overflow")
	// A line over the bound is reported with its number.
	err = EachSample(strings.NewReader("10\n11\n"+strings.Repeat("7", 1<<20+1)+"\n12\n"), "f", func(int64) {})
	assert.ErrorIs(t, err, bufio.ErrTooLong)
	assert.ErrorContains(t, err, "f:3: a line over 1048576 bytes: not a file of raw samples")
}

// ReadSamples allocates about the slice it returns: 8 bytes a sample plus
// its buffers, not copies of the file (the split-based reader took 7.2
// times the file's size).
func TestReadSamplesMemory(t *testing.T) {
	const n = 200_000
	raw := samples(n, 3)
	path, err := writeSamples(t.TempDir(), "latency", raw)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := ReadSamples(path)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Equal(t, raw, got)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("file %d bytes, %d samples: ReadSamples allocated %d bytes (%.2fx the file)", fi.Size(), n, alloc, float64(alloc)/float64(fi.Size()))
	assert.Less(t, alloc, uint64(8*n+256<<10), "the slice and its read buffers only")
}
