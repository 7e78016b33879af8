package artifacts

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// The HDR log reader allocates each histogram's counts from its encoded
// header before reading a count: a forged header (1 to MaxInt64 at 5
// digits) asks for 49 MB, and a log of many for as much as its lines.
// ReadHlog checks every header first.
const (
	// maxHlogCounts is the most counts one histogram of a log may have: 73
	// times this package's own (1 ns to 100 s at 3 digits, 28,672 counts).
	maxHlogCounts = 1 << 21
	// maxHlogTotalCounts bounds the counts of all a log's histograms
	// together (128 MiB of them).
	maxHlogTotalCounts = 1 << 24
)

// hlogGuard passes an HDR log's lines through, failing a line over
// maxHlogLine and the first line whose histogram header asks for more
// counts than the bounds allow.
type hlogGuard struct {
	sc      *bufio.Scanner
	path    string
	line    int
	total   int64
	pending []byte
	err     error
}

func newHlogGuard(r io.Reader, path string) *hlogGuard {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxHlogLine+1)
	return &hlogGuard{sc: sc, path: path}
}

func (g *hlogGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		if !g.sc.Scan() {
			g.err = g.sc.Err()
			if g.err == nil {
				g.err = io.EOF
			}
			if g.err == bufio.ErrTooLong {
				g.err = fmt.Errorf("%s:%d: a line over %d bytes: not an HDR log", g.path, g.line+1, maxHlogLine)
			}
			continue
		}
		g.line++
		if len(g.sc.Bytes()) > maxHlogLine {
			g.err = fmt.Errorf("%s:%d: a line over %d bytes: not an HDR log", g.path, g.line, maxHlogLine)
			continue
		}
		if n, ok := hlogCounts(g.sc.Text()); ok {
			if g.total += n; n > maxHlogCounts || g.total > maxHlogTotalCounts {
				g.err = fmt.Errorf("%s:%d: a histogram of %d counts (%d in the log so far): over the %d (%d in all) this reader takes; its header is forged or from a histogram far wider than a latency's", g.path, g.line, n, g.total, maxHlogCounts, maxHlogTotalCounts)
				continue
			}
		}
		g.pending = append(append(g.pending[:0], g.sc.Bytes()...), '\n')
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// hlogCounts returns how many counts the histogram on an interval line
// asks for, and false when the line holds none it can read (a comment, a
// legend, a malformed line: the log reader says what is wrong with it).
func hlogCounts(line string) (int64, bool) {
	if strings.HasPrefix(line, "#") {
		return 0, false
	}
	encoded := strings.TrimSpace(line[strings.LastIndexByte(line, ',')+1:])
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(decoded) < 8 {
		return 0, false
	}
	z, err := zlib.NewReader(bytes.NewReader(decoded[8:]))
	if err != nil {
		return 0, false
	}
	defer z.Close()
	var h [40]byte // cookie, payload length, offset, digits (int32); lowest, highest (int64); ratio
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return 0, false
	}
	digits := int32(binary.BigEndian.Uint32(h[12:]))
	lowest := int64(binary.BigEndian.Uint64(h[16:]))
	highest := int64(binary.BigEndian.Uint64(h[24:]))
	if digits < 0 || digits > 5 {
		return 0, false // refused by the reader
	}
	return countsLen(lowest, highest, int(digits)), true
}

// countsLen is the length of the counts array the decoder allocates for a
// histogram of that geometry, as HdrHistogram defines it: sub-buckets of
// single-unit resolution up to 2*10^digits, then buckets that double up to
// highest (TestReadHlogForgedHeader checks it against hdrhistogram-go).
func countsLen(lowest, highest int64, digits int) int64 {
	lowest = max(lowest, 1)
	subBucketCountMagnitude := int(math.Ceil(math.Log2(2 * math.Pow10(digits))))
	halfMagnitude := max(subBucketCountMagnitude, 1) - 1
	unitMagnitude := max(int(math.Floor(math.Log2(float64(lowest)))), 0)
	if unitMagnitude+halfMagnitude > 61 {
		return 0 // refused by the reader
	}
	subBucketCount := int64(1) << (halfMagnitude + 1)
	untrackable := subBucketCount << unitMagnitude
	buckets := int64(1)
	for untrackable <= highest {
		if untrackable > math.MaxInt64/2 {
			buckets++
			break
		}
		untrackable <<= 1
		buckets++
	}
	return (buckets + 1) * (subBucketCount / 2)
}
