package latency

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable writes summaries as a fixed-width text table in microseconds,
// one row per labelled summary, in the spirit of perftest's result table but
// with every column defined in this package. A percentile with too few
// samples prints as "-". Warnings follow the table, one per line, prefixed
// "# ".
func WriteTable(w io.Writer, rows []LabeledSummary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %10s", "", "samples")
	for _, h := range tableHeads() {
		fmt.Fprintf(&b, " %10s", h)
	}
	b.WriteString("\n")
	for _, r := range rows {
		s := r.Summary
		fmt.Fprintf(&b, "%-12s %10d", r.Label, s.Count)
		cols := []float64{s.Min}
		oks := []bool{s.Count > 0}
		for _, q := range s.Percentiles {
			cols, oks = append(cols, q.Value), append(oks, q.OK)
		}
		cols = append(cols, s.Max, s.Mean, s.StdDev)
		oks = append(oks, s.Count > 0, s.Count > 0, s.Count > 1)
		for i, v := range cols {
			if oks[i] {
				fmt.Fprintf(&b, " %10.3f", v/1000)
			} else {
				fmt.Fprintf(&b, " %10s", "-")
			}
		}
		b.WriteString("\n")
	}
	for _, r := range rows {
		for _, warn := range r.Summary.Warnings {
			fmt.Fprintf(&b, "# %s: %s\n", r.Label, warn)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// LabeledSummary is one row of WriteTable.
type LabeledSummary struct {
	Label   string
	Summary Summary
}

func tableHeads() []string {
	h := []string{"min[us]"}
	for _, p := range Percentiles {
		h = append(h, p.Name()+"[us]")
	}
	return append(h, "max[us]", "mean[us]", "stdev[us]")
}
