package fleet

import (
	"bufio"
	"fmt"
	"io"

	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"

	"golang.org/x/perf/benchunit"
)

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

// WriteMatrix writes one table per benchmark and time unit: rows are the
// nodes that ran the benchmark (src), columns the nodes that answered
// (dst), each cell the median over the repetitions with its 95%
// confidence interval, formatted as benchstat does. These are the figures
// of `benchstat -filter /size:S -row /src -col /dst`, without its "vs
// base" columns, which would compare every destination with the first.
// Units other than times (B/op, allocs/op) are left out, but for the load
// stream's throughput (LoadUnit).
func (r *Results) WriteMatrix(w io.Writer, nodes []string) error {
	return r.writeMatrix(w, nodes, func(bi, ui int) bool { return MatrixUnit(r.Units[ui]) })
}

// WriteMatrixOf writes WriteMatrix's configuration lines and its table of
// one benchmark and unit (any unit the results keep), or none when the
// results have no such cells.
func (r *Results) WriteMatrixOf(w io.Writer, nodes []string, bench, unit string) error {
	return r.writeMatrix(w, nodes, func(bi, ui int) bool { return r.Benches[bi] == bench && r.Units[ui] == unit })
}

func (r *Results) writeMatrix(w io.Writer, nodes []string, want func(bench, unit int) bool) error {
	r.settleAll()
	b := bufio.NewWriter(w)
	for _, c := range r.Config {
		fmt.Fprintln(b, c)
	}
	// The cells in row order: rows and columns in the order of nodes.
	pos := r.positions(nodes)
	var order []int32
	for slot, key := range r.pairOf {
		if pos[key>>32] >= 0 && pos[uint32(key)] >= 0 {
			order = append(order, int32(slot))
		}
	}
	slices.SortFunc(order, func(x, y int32) int {
		kx, ky := r.pairOf[x], r.pairOf[y]
		if d := pos[kx>>32] - pos[ky>>32]; d != 0 {
			return d
		}
		return pos[uint32(kx)] - pos[uint32(ky)]
	})
	for bi := range r.Benches {
		for ui := range r.Units {
			if !want(bi, ui) {
				continue
			}
			if t, ok := r.tableOf[[2]int{bi, ui}]; ok && t >= 0 {
				r.writeTable(b, r.tables[t], nodes, order, pos)
			}
		}
	}
	return b.Flush()
}

// MatrixUnit reports whether WriteMatrix writes a table of unit: a time,
// or the load stream's throughput (LoadUnit), shown beside the latency.
func MatrixUnit(unit string) bool { return TimeUnit(unit) || unit == LoadUnit }

// TimeUnit reports whether unit is a time, a figure pairs can be judged on.
func TimeUnit(unit string) bool {
	return benchunit.ClassOf(unit) == benchunit.Decimal && strings.Contains(unit, "sec")
}

// LoadUnit is the load stream's throughput (RDMABENCH_LOAD) as the pair
// files are read: the benchmark's load-MB/s, tidied to bytes a second as
// benchstat tidies it. It is a throughput, higher is better: the matrix
// shows it, but pairs are never judged on it, nor is it held to -max.
const LoadUnit = "load-B/s"

func (r *Results) writeTable(b *bufio.Writer, t *table, nodes []string, order []int32, pos []int) {
	bench, unit := r.Benches[t.bench], r.Units[t.unit]
	// One pass over the table's cells in row order, each formatted once
	// into one buffer: a 1000-node matrix is 10^6 cells, and nothing here
	// may cost more than a pass or hold more than the table's text.
	hasRow := make([]bool, len(nodes))
	hasCol := make([]bool, len(nodes))
	var centers []float64
	var present []int32 // slots of order with a cell here
	for _, slot := range order {
		if int(slot) >= len(t.tail) || t.tail[slot] == 0 {
			continue
		}
		key := r.pairOf[slot]
		hasRow[pos[key>>32]], hasCol[pos[uint32(key)]] = true, true
		centers = append(centers, t.center[slot])
		present = append(present, slot)
	}
	if len(present) == 0 {
		return
	}
	scaler := benchunit.CommonScale(centers, benchunit.Decimal)
	var warnings []string
	notes := map[uint16]string{} // a range's footnote marks, once
	text := make([]byte, 0, 16*len(present))
	ends := make([]int, len(present))
	widths := make([]int, len(nodes))
	for k, slot := range present {
		start := len(text)
		text = strconv.AppendFloat(text, t.center[slot]/scaler.Factor, 'f', scaler.Prec, 64)
		text = append(text, scaler.Prefix...)
		ti := t.tail[slot]
		tail := r.tails.list[ti]
		text = append(text, " ± "...)
		text = append(text, tail.Range...)
		note, ok := notes[ti]
		if !ok {
			for _, msg := range tail.Warnings {
				i := slices.Index(warnings, msg)
				if i < 0 {
					warnings = append(warnings, msg)
					i = len(warnings) - 1
				}
				note += " " + footnote(i)
			}
			notes[ti] = note
		}
		text = append(text, note...)
		ends[k] = len(text)
		col := pos[uint32(r.pairOf[slot])]
		widths[col] = max(widths[col], utf8.RuneCount(text[start:]))
	}
	var rows, cols []int
	for i := range nodes {
		if hasRow[i] {
			rows = append(rows, i)
		}
		if hasCol[i] {
			cols = append(cols, i)
		}
	}
	// Column widths: the widest of the header and the cells.
	rowW := utf8.RuneCountInString(bench)
	for _, i := range rows {
		rowW = max(rowW, utf8.RuneCountInString(nodes[i]))
	}
	for _, j := range cols {
		widths[j] = max(widths[j], utf8.RuneCountInString("dst="+nodes[j]), utf8.RuneCountInString(unit))
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
	for k, j := range cols {
		hdr[k] = center("dst="+nodes[j], widths[j])
		widths[j] = max(widths[j], utf8.RuneCountInString(hdr[k]))
		hdr[k], units[k] = pad(hdr[k], widths[j]), pad(center(unit, widths[j]), widths[j])
	}
	line(bench, hdr, "│")
	line("src", units, "│")
	k := 0 // the next cell of present, in row order
	for _, i := range rows {
		b.WriteString(pad(nodes[i], rowW))
		for _, j := range cols {
			w := widths[j]
			if k < len(present) {
				if key := r.pairOf[present[k]]; pos[key>>32] == i && pos[uint32(key)] == j {
					start := 0
					if k > 0 {
						start = ends[k-1]
					}
					cell := text[start:ends[k]]
					b.WriteString("   ")
					b.Write(cell)
					w -= utf8.RuneCount(cell)
					k++
					writeSpaces(b, w)
					continue
				}
			}
			writeSpaces(b, w+3)
		}
		b.WriteString("\n")
	}
	for k, wn := range warnings {
		fmt.Fprintf(b, "%s %s\n", footnote(k), wn)
	}
}

func writeSpaces(b *bufio.Writer, n int) {
	const spaces = "                                                                "
	for n > 0 {
		k := min(n, len(spaces))
		b.WriteString(spaces[:k])
		n -= k
	}
}

func footnote(k int) string {
	marks := []string{"¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}
	if k < len(marks) {
		return marks[k]
	}
	return fmt.Sprintf("(%d)", k+1)
}
