package benchfile

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

// zeros is /dev/zero: one line that never ends.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func count(r io.Reader, m Malformed) (int, Info, error) {
	n := 0
	info, err := Read(r, "bench.txt", m, func(*benchfmt.Result) error { n++; return nil })
	return n, info, err
}

// TestEndlessLine: /dev/zero ends the read with an error naming the line,
// not with the memory of the host.
func TestEndlessLine(t *testing.T) {
	_, _, err := count(io.MultiReader(strings.NewReader("BenchmarkX 1 2 ns/op\n"), zeros{}), Skip)
	require.ErrorIs(t, err, ErrLineTooLong)
	assert.ErrorContains(t, err, "bench.txt:2: ")

	long := "BenchmarkX 1 2 ns/op\n# " + strings.Repeat("x", MaxLine) + "\n"
	_, _, err = count(strings.NewReader(long), Skip)
	require.ErrorIs(t, err, ErrLineTooLong)
	assert.ErrorContains(t, err, "bench.txt:2: ")

	// A line of MaxLine bytes is still read.
	ok := "# " + strings.Repeat("x", MaxLine-2) + "\nBenchmarkX 1 2 ns/op\n"
	n, _, err := count(strings.NewReader(ok), Fail)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// TestImplausible: NaN, ±Inf, negative values and iterations, and absurd
// values are refused as results, with the line number.
func TestImplausible(t *testing.T) {
	for _, line := range []string{
		"BenchmarkX 100 NaN ns/op",
		"BenchmarkX 100 +Inf ns/op",
		"BenchmarkX 100 -Inf p50-ns",
		"BenchmarkX 100 -3 ns/op",
		"BenchmarkX 100 1e308 ns/op",
		"BenchmarkX 100 5 ns/op 1e300 stalls",
		"BenchmarkX -5 5 ns/op",
		"BenchmarkX 0 5 ns/op",
	} {
		in := "BenchmarkX 100 5 ns/op\n" + line + "\n"
		n, _, err := count(strings.NewReader(in), Fail)
		var syntax *benchfmt.SyntaxError
		require.ErrorAs(t, err, &syntax, line)
		assert.Equal(t, 2, syntax.Line, line)
		assert.Equal(t, 1, n, line)

		n, info, err := count(strings.NewReader(in), Skip)
		require.NoError(t, err)
		assert.Equal(t, 1, n, line)
		assert.Equal(t, 1, info.SkippedCount, line)
	}
	// Zero is a value (a p0 of a counter), MaxValue the largest.
	n, _, err := count(strings.NewReader(fmt.Sprintf("BenchmarkX 1 0 stalls %g ns/op\n", MaxValue)), Fail)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.False(t, math.IsInf(MaxValue, 0))
}

// lines repeats a line n times without holding them.
type lines struct {
	line string
	n    int
	rest string
}

func (l *lines) Read(p []byte) (int, error) {
	if l.rest == "" {
		if l.n == 0 {
			return 0, io.EOF
		}
		l.n--
		l.rest = l.line
	}
	k := copy(p, l.rest)
	l.rest = l.rest[k:]
	return k, nil
}

// TestSkippedBounded: a million malformed lines keep MaxSkipped errors and
// a count.
func TestSkippedBounded(t *testing.T) {
	_, info, err := count(io.MultiReader(&lines{line: "BenchmarkX 1 x ns/op\n", n: 100000}, strings.NewReader("BenchmarkX 1 2 ns/op\n")), Skip)
	require.NoError(t, err)
	assert.Len(t, info.Skipped, MaxSkipped)
	assert.Equal(t, 100000, info.SkippedCount)
	assert.Equal(t, 1, info.Results)
}

// TestTooManyResults: more than MaxResults results end the read.
func TestTooManyResults(t *testing.T) {
	n, _, err := count(&lines{line: "BenchmarkX 1 2 ns/op\n", n: MaxResults + 1}, Skip)
	require.ErrorIs(t, err, ErrTooManyResults)
	assert.ErrorContains(t, err, fmt.Sprintf("bench.txt:%d: ", MaxResults+1))
	assert.Equal(t, MaxResults, n)
}

// TestComments: the hook sees each comment line whole, the last one
// without its newline too.
func TestComments(t *testing.T) {
	var got []string
	_, err := ReadOptions(strings.NewReader("# a\nBenchmarkX 1 2 ns/op\n x # not\n#b"), "f", Options{Comment: func(l []byte) { got = append(got, string(l)) }},
		func(*benchfmt.Result) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"# a", "#b"}, got)
}
