package artifacts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/rdmabench/rdmabench/env"
)

// A CapWriter passes on the first Max lines written to it and drops the
// rest, counting them. It sees the raw writer's 64 KiB flushes, not each
// sample, so it costs the measured loop nothing.
type CapWriter struct {
	w       io.Writer
	max     int64
	lines   int64
	dropped atomic.Int64
}

// NewCapWriter caps w at max lines.
func NewCapWriter(w io.Writer, max int64) *CapWriter { return &CapWriter{w: w, max: max} }

// Write passes p on up to the cap, and reports all of p written.
func (c *CapWriter) Write(p []byte) (int, error) {
	n := len(p)
	if c.lines >= c.max {
		c.dropped.Add(int64(bytes.Count(p, []byte{'\n'})))
		return n, nil
	}
	keep := p
	for i, left := 0, c.max-c.lines; i < len(p); {
		j := bytes.IndexByte(p[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if left--; left == 0 {
			keep = p[:i]
			c.dropped.Add(int64(bytes.Count(p[i:], []byte{'\n'})))
			break
		}
	}
	c.lines += int64(bytes.Count(keep, []byte{'\n'}))
	if _, err := c.w.Write(keep); err != nil {
		return 0, err
	}
	return n, nil
}

// Dropped returns how many lines were dropped at the cap.
func (c *CapWriter) Dropped() int64 { return c.dropped.Load() }

// Note says what the cap did, "" when it dropped nothing.
func (c *CapWriter) Note() string {
	d := c.Dropped()
	if d == 0 {
		return ""
	}
	return fmt.Sprintf("raw samples: wrote the first %d of %d (%s=%d); the histogram and statistics hold them all; raise %s to keep more",
		c.max, c.max+d, env.VarMaxSamples, c.max, env.VarMaxSamples)
}

// EachSample calls fn with every sample of r, a samples file as
// Write writes it (or rdmalat's raw writer: decimals are truncated to whole
// nanoseconds), in order, holding one line at a time. name is for errors;
// a line that is not a whole number of nanoseconds, 0 or more, ends the
// read with its number.
func EachSample(r io.Reader, name string, fn func(int64)) error {
	const maxLine = 1 << 20
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 1
	for ; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if i := bytes.IndexByte(b, '.'); i >= 0 {
			b = b[:i]
		}
		v, err := parseInt(b)
		if err != nil {
			return fmt.Errorf("%s:%d: %q is not a sample in nanoseconds", name, line, sc.Bytes())
		}
		if v < 0 || b[0] == '-' {
			return fmt.Errorf("%s:%d: %q: a negative sample; a latency is 0 ns or more (not a file of raw samples?)", name, line, sc.Bytes())
		}
		fn(v)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: a line over %d bytes: not a file of raw samples (one number a line): %w", name, line, maxLine, err)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// parseInt parses a decimal without making a string of it.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, strconv.ErrSyntax
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

// ReadSamples reads a samples file (Write's latency.samples.txt) into a
// slice. It counts the lines first, so that the slice is allocated once at its size: the
// peak is 8 bytes a sample (about 1.2 times the file), not several copies
// of the file. Use EachSample to stream instead.
func ReadSamples(path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := countLines(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	out := make([]int64, 0, n)
	err = EachSample(f, path, func(v int64) { out = append(out, v) })
	return out, err
}

// countLines counts r's lines, a last one without a newline included.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n, last := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
