package latency

import (
	"bufio"
	"io"
	"strconv"
)

// RawWriter writes every sample in the order measured, one per line, like
// perftest -U: the one-way latency in nanoseconds with one decimal (a half
// round trip ends in .0 or .5), or the round trip for engines that report
// whole round trips. Writing a sample allocates nothing.
type RawWriter struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewRawWriter returns a RawWriter on w. Call Flush when done.
func NewRawWriter(w io.Writer) *RawWriter {
	return &RawWriter{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 32)}
}

func (r *RawWriter) write(rttNS int64, halve bool) {
	if r.err != nil {
		return
	}
	b := r.buf[:0]
	if halve {
		b = strconv.AppendInt(b, rttNS/2, 10)
		if rttNS%2 == 0 {
			b = append(b, ".0\n"...)
		} else {
			b = append(b, ".5\n"...)
		}
	} else {
		b = strconv.AppendInt(b, rttNS, 10)
		b = append(b, ".0\n"...)
	}
	_, r.err = r.w.Write(b)
	r.buf = b
}

// Flush writes out what is buffered and returns the first error met.
func (r *RawWriter) Flush() error {
	if r.err != nil {
		return r.err
	}
	return r.w.Flush()
}
