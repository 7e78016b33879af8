package fleet

// The fast path of PairParser: the agents' form of a pair file, read
// without benchfmt and without allocating per line (pairfile.go says when
// it gives way to benchfile's reader).

import (
	"bytes"

	"golang.org/x/perf/benchunit"

	"github.com/rdmabench/rdmabench/internal/benchfile"
)

type pairName struct{ bench, src, dst string }

type recentName struct {
	name string
	pn   pairName
}

type tidyUnit struct {
	orig, tidied string
	factor       float64
}

// maxCache bounds the parser's cache of units (a forged file
// could hold many).
const maxCache = 1024

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
