// Package benchfile is the module's one reader of benchmark results in
// Go's format (the output of go test -bench, what benchstat reads): the
// lines go through golang.org/x/perf/benchfmt, so units are tidied as
// benchstat tidies them ("p50-ns" arrives as "p50-sec", in seconds), and
// a line that starts like a result but does not parse is handled by one
// rule, chosen by the caller.
package benchfile

import (
	"io"

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

// Info is what a read saw besides the results.
type Info struct {
	Results int                      // how many results fn was given
	Units   benchfmt.UnitMetadataMap // the "Unit UNIT key=value" lines
	Skipped []error                  // with Skip: each malformed line's *benchfmt.SyntaxError
}

// Read calls fn with every result in r, in order; fileName names r in
// errors. The reader reuses a result and what it points to for the next
// one, so fn must copy what it keeps (res.Clone, string(res.Name)). An
// error from fn ends the read and is returned as it is.
func Read(r io.Reader, fileName string, malformed Malformed, fn func(res *benchfmt.Result) error) (Info, error) {
	info := Info{Units: benchfmt.UnitMetadataMap{}}
	rd := benchfmt.NewReader(r, fileName)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			if malformed == Fail {
				return info, rec
			}
			info.Skipped = append(info.Skipped, rec)
		case *benchfmt.UnitMetadata:
			info.Units[rec.UnitMetadataKey] = rec
		case *benchfmt.Result:
			info.Results++
			if err := fn(rec); err != nil {
				return info, err
			}
		}
	}
	return info, rd.Err()
}
