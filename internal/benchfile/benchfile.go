// Package benchfile is the module's one reader of benchmark results in
// Go's format (the output of go test -bench, what benchstat reads): the
// lines go through golang.org/x/perf/benchfmt, so units are tidied as
// benchstat tidies them ("p50-ns" arrives as "p50-sec", in seconds), and
// a line that starts like a result but does not parse is handled by one
// rule, chosen by the caller.
//
// A file of results may be huge or hostile, so a read is bounded: a line
// longer than MaxLine ends it (with the line's number), at most
// MaxResults results are read, at most MaxSkipped malformed lines are
// kept (the rest only counted), and a result whose iterations or values
// are not plausible measurements (NaN, ±Inf, negative, above MaxValue) is
// a malformed line like any other. The reader streams: its memory does not
// grow with the input, only with what fn keeps.
package benchfile

import (
	"errors"
	"fmt"
	"io"
	"math"

	"golang.org/x/perf/benchfmt"
)

// Malformed says what a result line that does not parse does to a read.
type Malformed int

const (
	// Fail ends the read with the line's *benchfmt.SyntaxError: for a
	// results file, where such a line is damage.
	Fail Malformed = iota
	// Skip keeps the line's error in Info.Skipped and reads on: for a
	// benchmark binary's own output, test logs and all.
	Skip
)

// The bounds of one read.
const (
	// MaxLine is the longest line read, in bytes; below benchfmt's own
	// 64 KiB scanner limit, so that the error is this package's and names
	// the line.
	MaxLine = 60 << 10
	// MaxResults is how many results one read takes: a hundred times the
	// largest results file the project writes (an A/B run's thousands).
	MaxResults = 1 << 18
	// MaxSkipped is how many malformed lines Info.Skipped keeps; the
	// others are only counted in Info.SkippedCount.
	MaxSkipped = 10
	// MaxValue is the largest value a result may carry, in its tidied
	// unit: a billion seconds, or a count no benchmark reaches.
	MaxValue = 1e15
)

// ErrLineTooLong reports a line longer than MaxLine.
var ErrLineTooLong = errors.New("line too long for a results file")

// ErrTooManyResults reports an input with more than MaxResults results.
var ErrTooManyResults = errors.New("too many results")

// Info is what a read saw besides the results.
type Info struct {
	Results      int                      // how many results fn was given
	Units        benchfmt.UnitMetadataMap // the "Unit UNIT key=value" lines
	Skipped      []error                  // with Skip: the first MaxSkipped malformed lines' *benchfmt.SyntaxError
	SkippedCount int                      // with Skip: how many malformed lines there were in all
}

// Options are a read's rule for malformed lines and its hook for comments.
type Options struct {
	Malformed Malformed
	// Comment, when set, is called with every line that starts with '#'
	// (which benchfmt ignores), without its newline; the line is reused
	// after the call.
	Comment func(line []byte)
}

// Read calls fn with every result in r, in order; fileName names r in
// errors. The reader reuses a result and what it points to for the next
// one, so fn must copy what it keeps (res.Clone, string(res.Name)). An
// error from fn ends the read and is returned as it is.
func Read(r io.Reader, fileName string, malformed Malformed, fn func(res *benchfmt.Result) error) (Info, error) {
	return ReadOptions(r, fileName, Options{Malformed: malformed}, fn)
}

// ReadOptions is Read with a hook for comment lines.
func ReadOptions(r io.Reader, fileName string, o Options, fn func(res *benchfmt.Result) error) (Info, error) {
	info := Info{Units: benchfmt.UnitMetadataMap{}}
	if fileName == "" {
		fileName = "<unknown>"
	}
	lines := &lineGuard{r: r, comment: o.Comment, line: 1}
	rd := benchfmt.NewReader(lines, fileName)
	malformed := func(e *benchfmt.SyntaxError) error {
		if o.Malformed == Fail {
			return e
		}
		if len(info.Skipped) < MaxSkipped {
			info.Skipped = append(info.Skipped, e)
		}
		info.SkippedCount++
		return nil
	}
	for rd.Scan() {
		if lines.err != nil {
			break // a truncated line: the read fails below
		}
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			if err := malformed(rec); err != nil {
				return info, err
			}
		case *benchfmt.UnitMetadata:
			info.Units[rec.UnitMetadataKey] = rec
		case *benchfmt.Result:
			if e := implausible(rec); e != nil {
				if err := malformed(e); err != nil {
					return info, err
				}
				continue
			}
			if info.Results == MaxResults {
				_, line := rec.Pos()
				return info, fmt.Errorf("%s:%d: %w: more than %d; split the file (benchstat -filter selects a part)", fileName, line, ErrTooManyResults, MaxResults)
			}
			info.Results++
			if err := fn(rec); err != nil {
				return info, err
			}
		}
	}
	if lines.err != nil {
		return info, fmt.Errorf("%s:%d: %w: over %d bytes (not go test -bench output?)", fileName, lines.line, ErrLineTooLong, MaxLine)
	}
	return info, rd.Err()
}

// implausible returns why rec is no measurement, or nil.
func implausible(rec *benchfmt.Result) *benchfmt.SyntaxError {
	file, line := rec.Pos()
	if rec.Iters < 1 {
		return &benchfmt.SyntaxError{FileName: file, Line: line, Msg: fmt.Sprintf("%d iterations: want at least 1", rec.Iters)}
	}
	for _, v := range rec.Values {
		if math.IsNaN(v.Value) || v.Value < 0 || v.Value > MaxValue {
			unit, val := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, val = v.OrigUnit, v.OrigValue
			}
			return &benchfmt.SyntaxError{FileName: file, Line: line,
				Msg: fmt.Sprintf("%g %s: want a finite value from 0 to %g", val, unit, MaxValue)}
		}
	}
	return nil
}

// lineGuard passes r through, counting lines, and fails a line longer
// than MaxLine before benchfmt's scanner would; it hands each comment line
// to a hook, keeping at most one line.
type lineGuard struct {
	r       io.Reader
	comment func([]byte)
	line    int    // the line being read, from 1
	n       int    // its length so far
	buf     []byte // with a hook: its bytes so far, when it is a comment
	keep    bool   // whether the line is a comment
	err     error  // ErrLineTooLong, once
}

func (g *lineGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			if g.keep {
				g.comment(g.buf)
			}
			g.line++
			g.n, g.buf, g.keep = 0, g.buf[:0], false
			continue
		}
		if g.n == 0 && g.comment != nil && b == '#' {
			g.keep = true
		}
		g.n++
		if g.n > MaxLine {
			g.err = ErrLineTooLong
			return i, g.err
		}
		if g.keep {
			g.buf = append(g.buf, b)
		}
	}
	if err == io.EOF && g.keep && g.n > 0 {
		g.comment(g.buf) // a last line without its newline
		g.keep = false
	}
	return n, err
}
