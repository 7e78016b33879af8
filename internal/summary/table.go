package summary

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

// Metric is one column of the table: a unit of the result lines.
type Metric struct {
	Unit    string // tidied unit in the results, "p50-sec"
	Label   string // column heading, "p50"
	Time    bool   // seconds, shown in microseconds
	Counter bool   // a NIC counter's change per operation (counters.go)
}

// Metrics are the table's columns, perftest's t_min, t_typical, the
// tail percentiles and t_max, and the stall count.
var Metrics = []Metric{
	{Unit: "min-sec", Label: "min", Time: true},
	{Unit: "p50-sec", Label: "p50", Time: true},
	{Unit: "p90-sec", Label: "p90", Time: true},
	{Unit: "p99-sec", Label: "p99", Time: true},
	{Unit: "p99.9-sec", Label: "p99.9", Time: true},
	{Unit: "max-sec", Label: "max", Time: true},
	{Unit: "stalls", Label: "stalls", Time: false},
}

// ConfigKeys are the config lines that decide what a figure means: when
// one holds a single value in the whole file it goes on the line above
// the table, when it varies it becomes a column.
var ConfigKeys = []struct{ Key, Label string }{
	{"rdma-device", "device"},
	{"rdma-peer-device", "peer"},
	{"rdmabench-mode", "mode"},
	{"rdma-transport", "transport"},
	{"rdma-completion", "completion"},
	{"rdma-cm", "cm"},
	{"rdma-inline-max", "inline"},
	{"rdmabench-cpus", "cpus"},
}

// Options are the statistics of the table.
type Options struct {
	Confidence float64
	Assumption benchmath.Assumption
	Thresholds *benchmath.Thresholds
}

// DefaultOptions are benchstat's defaults: the median of the runs with a
// distribution-free 95% interval.
var DefaultOptions = Options{Confidence: 0.95, Assumption: benchmath.AssumeNothing, Thresholds: &benchmath.DefaultThresholds}

// Row is one benchmark and size under one configuration.
type Row struct {
	Name    string            // "RDMAWrite/size=2"
	Base    string            // the name without its size, "RDMAWrite"
	Size    int               // bytes; 0 when the name has no size=
	Config  map[string]string // the values of the varying ConfigKeys
	Runs    int
	Iters   []int                        // distinct iteration counts, ascending
	Cells   map[string]benchmath.Summary // by Metric.Unit; absent when no run reports it
	Partial map[string]int               // by Metric.Unit: runs that report it, when fewer than Runs
}

// Table is the summary of one results file.
type Table struct {
	Common   [][2]string // the ConfigKeys with one value: label, value
	Varying  []string    // the ConfigKeys that vary, as columns (keys)
	Counters []Metric    // NIC counter columns after the stalls; none without rdma-counters: on
	Warnings []string
	Rows     []Row
	Options  Options
}

// Summarize computes the table of f.
func Summarize(f *File, o Options) *Table {
	t := &Table{Warnings: f.Warnings, Options: o, Counters: counterColumns(f)}
	for _, ck := range ConfigKeys {
		seen := map[string]bool{}
		for _, r := range f.Runs {
			seen[r.Config[ck.Key]] = true
		}
		switch {
		case len(seen) > 1:
			t.Varying = append(t.Varying, ck.Key)
		case !seen[""]:
			t.Common = append(t.Common, [2]string{ck.Label, f.Runs[0].Config[ck.Key]})
		}
	}
	type group struct {
		row    *Row
		values map[string][]float64
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range f.Runs {
		key := r.Name
		cfg := map[string]string{}
		for _, k := range t.Varying {
			cfg[k] = r.Config[k]
			key += "\x00" + r.Config[k]
		}
		g := groups[key]
		if g == nil {
			base, size := splitSize(r.Name)
			g = &group{row: &Row{Name: r.Name, Base: base, Size: size, Config: cfg}, values: map[string][]float64{}}
			groups[key] = g
			order = append(order, key)
		}
		g.row.Runs++
		if !slices.Contains(g.row.Iters, r.Iters) {
			g.row.Iters = append(g.row.Iters, r.Iters)
		}
		for _, m := range Metrics {
			if v, ok := r.Values[m.Unit]; ok {
				g.values[m.Unit] = append(g.values[m.Unit], v)
			}
		}
		for _, m := range t.Counters {
			if v, ok := counterValue(r, m); ok {
				g.values[m.Unit] = append(g.values[m.Unit], v)
			}
		}
	}
	for _, key := range order {
		g := groups[key]
		row := g.row
		slices.Sort(row.Iters)
		row.Cells = map[string]benchmath.Summary{}
		for unit, vs := range g.values {
			row.Cells[unit] = o.Assumption.Summary(benchmath.NewSample(vs, o.Thresholds), o.Confidence)
			if len(vs) < row.Runs {
				if row.Partial == nil {
					row.Partial = map[string]int{}
				}
				row.Partial[unit] = len(vs)
			}
		}
		t.Rows = append(t.Rows, *row)
	}
	// Benchmarks in the order they ran, each one's sizes ascending.
	first := map[string]int{}
	for i, r := range t.Rows {
		if _, ok := first[r.Base]; !ok {
			first[r.Base] = i
		}
	}
	slices.SortStableFunc(t.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(first[a.Base], first[b.Base]), cmp.Compare(a.Size, b.Size))
	})
	return t
}

// splitSize splits "RDMAWrite/size=2" into "RDMAWrite" and 2, and
// "RDMAAtomic/op=fetch_add/size=8" into "RDMAAtomic/op=fetch_add" and 8.
func splitSize(name string) (string, int) {
	var kept []string
	size := 0
	for _, part := range strings.Split(name, "/") {
		if v, ok := strings.CutPrefix(part, "size="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				size = n
				continue
			}
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "/"), size
}
