package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/internal/benchfile"
)

// A PairFile is one file of results, parsed and not yet added to Results:
// PairParsers on several goroutines fill them, and Results.Add takes them
// in order.
type PairFile struct {
	name       string
	config     []string // "key: value", with withConfig
	withConfig bool
	values     []pairValue
	runs       []pairRun // the values' pairs, by runs of values of one pair
}

type pairValue struct {
	bench, unit string
	v           float64
}

// A pairRun says that values[previous run's end:end] are of src -> dst: a
// file's values come a pair at a time, and a 1000-node job has 35 million.
type pairRun struct {
	src, dst string
	end      int
}

// add appends one value of src -> dst.
func (f *PairFile) add(bench, unit, src, dst string, v float64) {
	f.startRun(src, dst)
	f.values = append(f.values, pairValue{bench, unit, v})
	f.runs[len(f.runs)-1].end = len(f.values)
}

// startRun makes src -> dst the pair of the values appended next.
func (f *PairFile) startRun(src, dst string) {
	if n := len(f.runs); n == 0 || f.runs[n-1].src != src || f.runs[n-1].dst != dst {
		f.runs = append(f.runs, pairRun{src, dst, len(f.values)})
	}
}

// runStart returns where run i's values start.
func (f *PairFile) runStart(i int) int {
	if i == 0 {
		return 0
	}
	return f.runs[i-1].end
}

// A PairParser parses pair files; it keeps buffers and caches from one
// file to the next, so one goroutine uses one.
//
// Pair files are written by rdmafleet's agents, in one form: a fast path
// reads that form without benchfmt and without allocating per line, and
// gives the same values; anything else in a file (a line it does not
// expect, a value it does not read exactly) sends the file through
// benchfile's reader, whose result and errors are the reference
// (TestFastPathIsBenchfmt, FuzzReadPair).
type PairParser struct {
	buf       []byte
	strs      map[string]string // interned benchmarks and nodes
	scratch   []byte
	units     map[string]tidyUnit
	recent    [4]recentName // the last lines' names: a file cycles through a few
	next      int
	lastUnits []tidyUnit // by place in the last line
}

// maxFast is the largest file the fast path reads whole; a larger one
// streams through benchfile.
const maxFast = 1 << 20

// NewPairParser returns a parser.
func NewPairParser() *PairParser {
	return &PairParser{strs: map[string]string{}, units: map[string]tidyUnit{}}
}

// Parse reads one file of results into f, all or nothing. With src and
// dst set, every result must be of that pair and there must be one; with
// withConfig, f keeps the configuration lines of the first result.
func (p *PairParser) Parse(rd io.Reader, fileName, src, dst string, withConfig bool, f *PairFile) error {
	return p.parse(rd, fileName, src, dst, withConfig, maxFast, f)
}

// MaxRoundFast is the largest file of many pairs (a round's) that
// ParseAll reads whole: 8,000 pairs of two sizes.
const MaxRoundFast = 16 << 20

// ParseAll reads a file of results of any pairs into f, all or nothing,
// as Results.Read does.
func (p *PairParser) ParseAll(rd io.Reader, fileName string, withConfig bool, f *PairFile) error {
	return p.parse(rd, fileName, "", "", withConfig, MaxRoundFast, f)
}

func (p *PairParser) parse(rd io.Reader, fileName, src, dst string, withConfig bool, limit int, f *PairFile) error {
	*f = PairFile{name: fileName, withConfig: withConfig, values: f.values[:0], runs: f.runs[:0]}
	if p.buf == nil {
		p.buf = make([]byte, 0, 64<<10)
	}
	data, err := readUpTo(rd, p.buf[:0], limit+1)
	if cap(data) <= maxFast {
		p.buf = data[:0] // a round's buffer is not kept
	}
	if err != nil {
		return fmt.Errorf("%s: %w", fileName, err)
	}
	if len(data) <= limit && p.fast(data, src, dst, withConfig, f) {
		return nil
	}
	*f = PairFile{name: fileName, withConfig: withConfig, values: f.values[:0], runs: f.runs[:0]}
	return p.slow(io.MultiReader(bytes.NewReader(data), rd), fileName, src, dst, withConfig, f)
}

// Pairs returns the pairs f holds results of, in order of appearance.
func (f *PairFile) Pairs() []Pair {
	var pairs []Pair
	seen := map[Pair]bool{}
	for _, r := range f.runs {
		if p := (Pair{r.src, r.dst}); !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// readUpTo appends what rd holds to buf, at most limit bytes.
func readUpTo(rd io.Reader, buf []byte, limit int) ([]byte, error) {
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// slow reads through benchfile, the reference for every file.
func (p *PairParser) slow(rd io.Reader, fileName, src, dst string, withConfig bool, f *PairFile) error {
	first := withConfig
	_, err := benchfile.Read(rd, fileName, benchfile.Fail, func(rec *benchfmt.Result) error {
		bench, s, d, err := SplitPairName(rec.Name)
		if err != nil {
			file, line := rec.Pos()
			return fmt.Errorf("%s:%d: %w", file, line, err)
		}
		if first {
			for _, c := range rec.Config {
				if c.File {
					f.config = append(f.config, c.Key+": "+string(c.Value))
				}
			}
			first = false
		}
		for _, v := range rec.Values {
			f.add(bench, v.Unit, s, d, v.Value)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if src == "" && dst == "" {
		return nil
	}
	for _, r := range f.runs {
		if r.src != src || r.dst != dst {
			return fmt.Errorf("%s: holds results of %s -> %s, not of %s -> %s", fileName, r.src, r.dst, src, dst)
		}
	}
	if len(f.values) == 0 {
		return fmt.Errorf("%s: no results", fileName)
	}
	return nil
}
