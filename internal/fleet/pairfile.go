package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

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

type pairName struct{ bench, src, dst string }

type recentName struct {
	name string
	pn   pairName
}

type tidyUnit struct {
	orig, tidied string
	factor       float64
}

// maxFast is the largest file the fast path reads whole; a larger one
// streams through benchfile.
const maxFast = 1 << 20

// maxCache bounds the parser's cache of units (a forged file
// could hold many).
const maxCache = 1024

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

var benchmarkPrefix = []byte("Benchmark")

// fast reads the agents' form: configuration lines, then result lines of
// one pair with plain decimal values. It returns false, leaving f to be
// reset, at anything else.
func (p *PairParser) fast(data []byte, src, dst string, withConfig bool, f *PairFile) bool {
	results := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > benchfile.MaxLine {
			return false
		}
		if bytes.HasPrefix(line, benchmarkPrefix) {
			if results++; results > benchfile.MaxResults || !p.result(line[len(benchmarkPrefix):], src, dst, f) {
				return false
			}
			continue
		}
		if len(line) > 0 && line[0] == 'U' {
			return false // perhaps a Unit line
		}
		if withConfig && results == 0 && !configLine(line, f) {
			return false
		}
	}
	return results > 0
}

// configLine adds line to f's configuration as benchfmt would, returning
// false where benchfmt's rules go beyond the fast path (a key removed by
// an empty value, a key given twice, bytes other than printable ASCII).
func configLine(line []byte, f *PairFile) bool {
	for _, c := range line {
		if c >= 0x80 || c < 0x20 && c != '\t' {
			return false
		}
	}
	if len(line) == 0 || line[0] < 'a' || line[0] > 'z' {
		return true // not a configuration line: ignored
	}
	colon := -1
	for i, c := range line {
		if c == ' ' || c == '\t' || 'A' <= c && c <= 'Z' {
			return true
		}
		if i > 0 && c == ':' {
			colon = i
			break
		}
	}
	if colon < 0 {
		return true
	}
	key, val := line[:colon], line[colon+1:]
	if len(val) == 0 {
		return false
	}
	if val[0] != ' ' && val[0] != '\t' {
		return true // "key:value" is no configuration line
	}
	val = bytes.TrimLeft(val, " \t")
	if len(val) == 0 {
		return false
	}
	for _, c := range f.config {
		if len(c) > len(key) && c[len(key)] == ':' && c[:len(key)] == string(key) {
			return false
		}
	}
	f.config = append(f.config, string(key)+": "+string(val))
	return true
}

// result reads a result line after "Benchmark". Its costs are per byte
// and per value (a 1000-node job is 5 million lines of 7 values): one pass
// over the bytes, which checks them as it splits the fields; the line's
// name compared with the last few lines' before the map; each unit
// compared with the unit at its place in the last line (the agents write
// the same units in the same order) before the map.
func (p *PairParser) result(line []byte, src, dst string, f *PairFile) bool {
	name, line, ok := plainField(line)
	if !ok || len(name) == 0 || len(line) == 0 {
		return false
	}
	pn, ok := p.name(name)
	if !ok {
		return false
	}
	if (src != "" || dst != "") && (pn.src != src || pn.dst != dst) {
		return false
	}
	iters, line, ok := plainField(line)
	if !ok {
		return false
	}
	if n, ok := digits(iters); !ok || n < 1 {
		return false
	}
	f.startRun(pn.src, pn.dst)
	start := len(f.values)
	for k := 0; len(line) > 0; k++ {
		var num, unit []byte
		var ok1, ok2 bool
		num, line, ok1 = plainField(line)
		unit, line, ok2 = plainField(line)
		if !ok1 || !ok2 {
			return false
		}
		v, ok := decimal(num)
		if !ok || len(unit) == 0 {
			return false
		}
		var u tidyUnit
		if k < len(p.lastUnits) && p.lastUnits[k].orig == string(unit) {
			u = p.lastUnits[k]
		} else {
			u = p.unit(unit)
			if k < maxUnitsAt {
				if k >= len(p.lastUnits) {
					p.lastUnits = append(p.lastUnits, tidyUnit{})[:k+1]
				}
				p.lastUnits[k] = u
			}
		}
		// benchfmt's tidying: the value times the unit's factor, and the
		// tidied unit only when the value changed.
		tv, tu := v*u.factor, u.tidied
		if tv == v {
			tu = u.orig
		}
		if tv > benchfile.MaxValue {
			return false
		}
		f.values = append(f.values, pairValue{pn.bench, tu, tv})
	}
	f.runs[len(f.runs)-1].end = len(f.values)
	return len(f.values) > start
}

// maxUnitsAt is the most places in a line whose last unit is kept.
const maxUnitsAt = 32

// name returns the pair name of a result's name, false when it names no
// pair (then SplitPairName says why).
func (p *PairParser) name(name []byte) (pairName, bool) {
	for i := range p.recent {
		if r := &p.recent[i]; r.name == string(name) && r.name != "" {
			return r.pn, true
		}
	}
	pn, ok := p.split(name)
	if !ok {
		return pairName{}, false
	}
	p.next = (p.next + 1) % len(p.recent)
	p.recent[p.next] = recentName{string(name), pn}
	return pn, true
}

// split is SplitPairName without its allocations (benchfmt.Name.Parts
// makes a slice of parts, SplitPairName strings of them): a round file
// names a million pairs. The same algorithm: a trailing "-DIGITS" is
// GOMAXPROCS, dropped; the base and every part that is not /src= or /dst=
// make the benchmark; the last /src= and /dst= win and must not be empty.
// FuzzSplitPairName compares it with SplitPairName.
func (p *PairParser) split(name []byte) (pairName, bool) {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '-' && i < len(name)-1 {
			name = name[:i]
			break
		}
		if name[i] < '0' || name[i] > '9' {
			break
		}
	}
	end := bytes.IndexByte(name, '/')
	if end < 0 {
		return pairName{}, false
	}
	bench := append(p.scratch[:0], name[:end]...)
	var src, dst []byte
	for rest := name[end:]; len(rest) > 0; {
		end := bytes.IndexByte(rest[1:], '/') + 1
		if end == 0 {
			end = len(rest)
		}
		part := rest[:end]
		rest = rest[end:]
		switch {
		case bytes.HasPrefix(part, srcPart):
			src = part[len(srcPart):]
		case bytes.HasPrefix(part, dstPart):
			dst = part[len(dstPart):]
		default:
			bench = append(bench, part...)
		}
	}
	p.scratch = bench
	if len(src) == 0 || len(dst) == 0 {
		return pairName{}, false
	}
	return pairName{p.intern(bench), p.intern(src), p.intern(dst)}, true
}

var srcPart, dstPart = []byte("/src="), []byte("/dst=")

// intern returns b as a string, the same string for the same bytes while
// the parser's table of them is not full (a fleet's nodes and benchmarks).
func (p *PairParser) intern(b []byte) string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	if len(p.strs) >= maxInterned {
		clear(p.strs)
	}
	s := string(b)
	p.strs[s] = s
	return s
}

// maxInterned bounds intern's table: a fleet's node names, and a forged
// file's any number of names.
const maxInterned = 1 << 14

func (p *PairParser) unit(unit []byte) tidyUnit {
	if u, ok := p.units[string(unit)]; ok {
		return u
	}
	if len(p.units) >= maxCache {
		clear(p.units)
	}
	orig := string(unit)
	factor, tidied := benchunit.Tidy(1, orig)
	u := tidyUnit{orig, tidied, factor}
	p.units[orig] = u
	return u
}

// plainField splits off the first field of line and the spaces and tabs
// after it, and reports whether the field is printable ASCII.
func plainField(line []byte) (f, rest []byte, ok bool) {
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		if c == ' ' || c == '\t' {
			break
		}
		if c >= 0x80 || c < 0x20 {
			return nil, nil, false
		}
	}
	f, rest = line[:i], line[i:]
	for len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
		rest = rest[1:]
	}
	return f, rest, true
}

// digits reads a count of at most 18 digits.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimal reads "123" or "12.25" exactly as strconv.ParseFloat does: an
// integer of at most 18 digits converts as benchfmt converts it, and a
// decimal of at most 15 significant digits is one correctly rounded
// division of two exact floats (Clinger's fast path). Anything else
// returns false.
func decimal(b []byte) (float64, bool) {
	intPart, frac, dot := bytes.Cut(b, []byte{'.'})
	if !dot {
		n, ok := digits(b)
		return float64(n), ok
	}
	if len(intPart)+len(frac) == 0 || len(intPart)+len(frac) > 15 {
		return 0, false
	}
	var m int64
	for _, part := range [][]byte{intPart, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return 0, false
			}
			m = m*10 + int64(c-'0')
		}
	}
	return float64(m) / pow10[len(frac)], true
}
