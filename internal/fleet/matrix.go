package fleet

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"

	"github.com/rdmabench/rdmabench/internal/benchfile"
)

// Confidence is the level of the intervals in the matrix, benchstat's.
const Confidence = 0.95

// cellKey names one cell of one matrix.
type cellKey struct {
	bench, unit, src, dst string
}

// Results are the pair results of a fleet run, as read from benchfmt
// files whose benchmark names carry /src=NODE/dst=NODE.
type Results struct {
	Config  []string // the first file's configuration lines, "key: value"
	Benches []string // benchmark names without src, dst and GOMAXPROCS, in order of appearance
	Units   []string // tidied units (sec/op, p50-sec, ...), in order of appearance
	values  map[cellKey][]float64
	names   map[string]string // node and benchmark names, held once
}

// NewResults returns an empty set of results.
func NewResults() *Results {
	return &Results{values: map[cellKey][]float64{}, names: map[string]string{}}
}

// intern returns the one copy of s this Results holds.
func (r *Results) intern(s string) string {
	if v, ok := r.names[s]; ok {
		return v
	}
	r.names[s] = s
	return s
}

// Read adds the results of one benchfmt file.
func (r *Results) Read(rd io.Reader, fileName string) error {
	first := r.Config == nil
	_, err := benchfile.Read(rd, fileName, benchfile.Fail, func(rec *benchfmt.Result) error {
		bench, src, dst, err := SplitPairName(rec.Name)
		if err != nil {
			f, line := rec.Pos()
			return fmt.Errorf("%s:%d: %w", f, line, err)
		}
		bench, src, dst = r.intern(bench), r.intern(src), r.intern(dst)
		if first {
			for _, c := range rec.Config {
				if c.File {
					r.Config = append(r.Config, c.Key+": "+string(c.Value))
				}
			}
			first = false
		}
		if !slices.Contains(r.Benches, bench) {
			r.Benches = append(r.Benches, bench)
		}
		for _, v := range rec.Values {
			if !slices.Contains(r.Units, v.Unit) {
				r.Units = append(r.Units, v.Unit)
			}
			k := cellKey{bench, v.Unit, src, dst}
			r.values[k] = append(r.values[k], v.Value)
		}
		return nil
	})
	return err
}

// ReadPair adds the results of one pair's file, all or nothing: it adds
// none of them, and returns why, when the file does not parse or holds a
// result of any pair other than src to dst (a file copied or misnamed must
// not rewrite another pair's cell).
func (r *Results) ReadPair(rd io.Reader, fileName, src, dst string) error {
	one := NewResults()
	if err := one.Read(rd, fileName); err != nil {
		return err
	}
	n := 0
	for k, vs := range one.values {
		if k.src != src || k.dst != dst {
			return fmt.Errorf("%s: holds results of %s -> %s, not of %s -> %s", fileName, k.src, k.dst, src, dst)
		}
		n += len(vs)
	}
	if n == 0 {
		return fmt.Errorf("%s: no results", fileName)
	}
	if r.Config == nil {
		r.Config = one.Config
	}
	for _, b := range one.Benches {
		if !slices.Contains(r.Benches, b) {
			r.Benches = append(r.Benches, b)
		}
	}
	for _, u := range one.Units {
		if !slices.Contains(r.Units, u) {
			r.Units = append(r.Units, u)
		}
	}
	for k, vs := range one.values {
		k.bench, k.src, k.dst = r.intern(k.bench), r.intern(k.src), r.intern(k.dst)
		r.values[k] = append(r.values[k], vs...)
	}
	return nil
}

// SplitPairName splits "RDMAWrite/src=a/dst=b/size=2-4" into the
// benchmark without the pair and GOMAXPROCS ("RDMAWrite/size=2"), src and
// dst.
func SplitPairName(name benchfmt.Name) (bench, src, dst string, err error) {
	base, parts := name.Parts()
	var rest []string
	for _, p := range parts {
		switch s := string(p); {
		case strings.HasPrefix(s, "/src="):
			src = strings.TrimPrefix(s, "/src=")
		case strings.HasPrefix(s, "/dst="):
			dst = strings.TrimPrefix(s, "/dst=")
		case strings.HasPrefix(s, "-"): // GOMAXPROCS differs from node to node
		default:
			rest = append(rest, s)
		}
	}
	if src == "" || dst == "" {
		return "", "", "", fmt.Errorf("Benchmark%s: no /src=NODE/dst=NODE in the name: not a result stored by rdmafleet", name)
	}
	return string(base) + strings.Join(rest, ""), src, dst, nil
}

// Summary returns the median and confidence interval of a cell, and false
// when the pair has no result for that benchmark and unit.
func (r *Results) Summary(bench, unit, src, dst string) (benchmath.Summary, bool) {
	vs := r.values[cellKey{bench, unit, src, dst}]
	if len(vs) == 0 {
		return benchmath.Summary{}, false
	}
	s := benchmath.NewSample(slices.Clone(vs), &benchmath.DefaultThresholds)
	return benchmath.AssumeNothing.Summary(s, Confidence), true
}

// Centers returns the median of every cell of one matrix, by src and dst,
// NaN where a pair has no result; rows and columns in the order of nodes.
func (r *Results) Centers(bench, unit string, nodes []string) [][]float64 {
	grid := make([][]float64, len(nodes))
	for i, src := range nodes {
		grid[i] = make([]float64, len(nodes))
		for j, dst := range nodes {
			grid[i][j] = math.NaN()
			if s, ok := r.Summary(bench, unit, src, dst); ok {
				grid[i][j] = s.Center
			}
		}
	}
	return grid
}

// WriteMatrix writes one table per benchmark and time unit: rows are the
// nodes that ran the benchmark (src), columns the nodes that answered
// (dst), each cell the median over the repetitions with its 95%
// confidence interval, formatted as benchstat does. These are the figures
// of `benchstat -filter /size:S -row /src -col /dst`, without its "vs
// base" columns, which would compare every destination with the first.
// Units other than times (B/op, allocs/op) are left out.
func (r *Results) WriteMatrix(w io.Writer, nodes []string) error {
	b := bufio.NewWriter(w)
	for _, c := range r.Config {
		fmt.Fprintln(b, c)
	}
	for _, bench := range r.Benches {
		for _, unit := range r.Units {
			if benchunit.ClassOf(unit) != benchunit.Decimal || !strings.Contains(unit, "sec") {
				continue
			}
			r.writeTable(b, bench, unit, nodes)
		}
	}
	return b.Flush()
}

func (r *Results) writeTable(b *bufio.Writer, bench, unit string, nodes []string) {
	// Each cell's summary once, and rows and columns by index: a 1000-node
	// matrix is 10^6 cells, and nothing here may cost more than a pass.
	sums := make([][]benchmath.Summary, len(nodes))
	hasRow := make([]bool, len(nodes))
	hasCol := make([]bool, len(nodes))
	var centers []float64
	for i, src := range nodes {
		for j, dst := range nodes {
			if s, ok := r.Summary(bench, unit, src, dst); ok {
				if sums[i] == nil {
					sums[i] = make([]benchmath.Summary, len(nodes))
				}
				sums[i][j] = s
				centers = append(centers, s.Center)
				hasRow[i], hasCol[j] = true, true
			}
		}
	}
	var rows, cols []string
	var rowIdx, colIdx []int
	for i, n := range nodes {
		if hasRow[i] {
			rows, rowIdx = append(rows, n), append(rowIdx, i)
		}
		if hasCol[i] {
			cols, colIdx = append(cols, n), append(colIdx, i)
		}
	}
	if len(rows) == 0 {
		return
	}
	scaler := benchunit.CommonScale(centers, benchunit.Decimal)
	var warnings []string
	cells := make([][]string, len(rows))
	for i := range rows {
		cells[i] = make([]string, len(cols))
		for j := range cols {
			s := sums[rowIdx[i]][colIdx[j]]
			if !hasCell(s) {
				continue
			}
			cell := scaler.Format(s.Center) + " ± " + s.PctRangeString()
			for _, wn := range s.Warnings {
				msg := wn.Error()
				k := slices.Index(warnings, msg)
				if k < 0 {
					warnings = append(warnings, msg)
					k = len(warnings) - 1
				}
				cell += " " + footnote(k)
			}
			cells[i][j] = cell
		}
	}
	// Column widths: the widest of the header and the cells.
	rowW := utf8.RuneCountInString(bench)
	for _, src := range rows {
		rowW = max(rowW, utf8.RuneCountInString(src))
	}
	widths := make([]int, len(cols))
	for j, dst := range cols {
		widths[j] = max(utf8.RuneCountInString("dst="+dst), utf8.RuneCountInString(unit))
		for i := range rows {
			widths[j] = max(widths[j], utf8.RuneCountInString(cells[i][j]))
		}
	}
	// A string wider than its column (a node name longer than every cell)
	// is written whole: the widths below make room for it, and padding
	// never goes negative.
	pad := func(s string, w int) string { return s + strings.Repeat(" ", max(w-utf8.RuneCountInString(s), 0)) }
	center := func(s string, w int) string {
		left := max((w-utf8.RuneCountInString(s))/2, 0)
		return pad(strings.Repeat(" ", left)+s, w)
	}
	line := func(first string, fields []string, sep string) {
		b.WriteString(pad(first, rowW))
		for _, f := range fields {
			b.WriteString(" " + sep + " " + f)
		}
		b.WriteString(" " + sep + "\n")
	}
	fmt.Fprintf(b, "\n")
	hdr := make([]string, len(cols))
	units := make([]string, len(cols))
	for j, dst := range cols {
		hdr[j] = center("dst="+dst, widths[j])
		units[j] = center(unit, widths[j])
		widths[j] = max(widths[j], utf8.RuneCountInString(hdr[j]))
		hdr[j], units[j] = pad(hdr[j], widths[j]), pad(center(unit, widths[j]), widths[j])
	}
	line(bench, hdr, "│")
	line("src", units, "│")
	for i, src := range rows {
		b.WriteString(pad(src, rowW))
		for j := range cols {
			b.WriteString("   " + pad(cells[i][j], widths[j]))
		}
		b.WriteString("\n")
	}
	for k, wn := range warnings {
		fmt.Fprintf(b, "%s %s\n", footnote(k), wn)
	}
}

// hasCell reports whether s is a cell's summary, not the zero of a pair
// without results (a summary has at least one sample, so a finite center
// and an interval around it).
func hasCell(s benchmath.Summary) bool {
	return s.Lo != 0 || s.Hi != 0 || s.Center != 0 || s.Confidence != 0
}

func footnote(k int) string {
	marks := []string{"¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}
	if k < len(marks) {
		return marks[k]
	}
	return fmt.Sprintf("(%d)", k+1)
}
