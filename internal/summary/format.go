package summary

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchmath"
)

// Format writes the table for a person: a heading that says what the
// figures are, the common configuration on one line, the host warnings,
// then a row per benchmark and size. Times are microseconds with four
// significant digits; each cell is the median of the runs and, after ±,
// the half-width of its interval as a percentage of it, as benchstat
// prints it; stalls show the interval as a range, since it often starts
// at 0.
func (t *Table) Format(w io.Writer) error {
	var b strings.Builder
	runs, uniform := t.uniformRuns()
	fmt.Fprintf(&b, "latency in µs: median of the runs ± its %g%% interval, as benchstat computes them", 100*t.Options.Confidence)
	if uniform != "" {
		fmt.Fprintf(&b, "; %s per row", uniform)
	}
	b.WriteString("\n(write and send: one-way, half a round trip; read and atomics: the whole operation; as perftest reports them)\n")
	var common []string
	for _, kv := range t.Common {
		common = append(common, kv[0]+": "+kv[1])
	}
	if len(common) > 0 {
		b.WriteString(strings.Join(common, "  ") + "\n")
	}
	if len(t.Warnings) > 0 {
		fmt.Fprintf(&b, "host warnings: %s (each explained, with its fix, in a \"# warning\" line of the results)\n", strings.Join(t.Warnings, ", "))
	}
	b.WriteString("\n")

	head := []string{"benchmark", "size"}
	for _, k := range t.Varying {
		head = append(head, labelOf(k))
	}
	if uniform == "" {
		head = append(head, "runs")
	}
	columns := append(slices.Clone(Metrics), t.Counters...)
	for _, m := range columns {
		head = append(head, m.Label)
	}
	rows := [][]string{head}
	partial := false
	for _, r := range t.Rows {
		size := "-"
		if r.Size > 0 {
			size = strconv.Itoa(r.Size)
		}
		cells := []string{r.Base, size}
		for _, k := range t.Varying {
			cells = append(cells, r.Config[k])
		}
		if uniform == "" {
			cells = append(cells, runs[r.Name])
		}
		for _, m := range columns {
			s, ok := r.Cells[m.Unit]
			cell := "-"
			if ok {
				cell = formatCell(m, s)
			}
			if _, ok := r.Partial[m.Unit]; ok {
				cell += "*"
				partial = true
			}
			cells = append(cells, cell)
		}
		rows = append(rows, cells)
	}
	writeColumns(&b, rows)
	if partial {
		b.WriteString("* only some runs report this figure (too few samples in the others, or counters not read)\n")
	}
	if len(t.Counters) > 0 {
		b.WriteString("counters: each NIC counter's change per operation (RDMABENCH_COUNTERS=1), median (interval); - where the runs did not read them\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// uniformRuns returns each row's "runs x round trips" and, when every row
// has the same, that text.
func (t *Table) uniformRuns() (map[string]string, string) {
	per := map[string]string{}
	var all []string
	for _, r := range t.Rows {
		iters := make([]string, len(r.Iters))
		for i, n := range r.Iters {
			iters[i] = strconv.Itoa(n)
		}
		s := fmt.Sprintf("%d runs x %s round trips", r.Runs, strings.Join(iters, "/"))
		per[r.Name] = s
		if !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	if len(all) == 1 {
		return per, all[0]
	}
	for name, s := range per { // shorter, for a column
		per[name] = strings.ReplaceAll(strings.TrimSuffix(s, " round trips"), " runs x ", "x")
	}
	return per, ""
}

func labelOf(key string) string {
	for _, ck := range ConfigKeys {
		if ck.Key == key {
			return ck.Label
		}
	}
	return key
}

// formatCell writes one summary: "11.34 ±2%", or for a count
// "3 (1–7)".
func formatCell(m Metric, s benchmath.Summary) string {
	if m.Counter { // per operation: mostly fractions, 0.083
		return fmt.Sprintf("%s (%s–%s)", formatPerOp(s.Center), formatPerOp(s.Lo), formatPerOp(s.Hi))
	}
	if !m.Time {
		if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
			return formatCount(s.Center) + " (∞)"
		}
		return fmt.Sprintf("%s (%s–%s)", formatCount(s.Center), formatCount(s.Lo), formatCount(s.Hi))
	}
	return FormatMicros(s.Center*1e6) + " ±" + s.PctRangeString()
}

// FormatMicros writes microseconds with four significant digits and no
// exponent: 0.8123, 11.34, 68.22, 1121, 16548.
func FormatMicros(us float64) string {
	switch a := math.Abs(us); {
	case a >= 1000:
		return strconv.FormatFloat(us, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(us, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(us, 'f', 2, 64)
	}
	return strconv.FormatFloat(us, 'f', 3, 64)
}

// formatPerOp writes a count per operation with up to three significant
// digits: 0, 0.083, 1.5, 12.
func formatPerOp(v float64) string {
	if math.IsInf(v, 0) {
		return "∞"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func formatCount(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// writeColumns writes rows as columns two spaces apart: the first left
// aligned, the others right aligned.
func writeColumns(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				line.WriteString(c + pad)
			default:
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
