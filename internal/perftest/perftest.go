// Package perftest reads the text reports of perftest's latency tests
// (ib_write_lat, ib_send_lat, ib_read_lat, ib_atomic_lat from
// github.com/linux-rdma/perftest), so that rdmabench's figures can be set
// next to the reference tool's.
//
// A latency test prints, on standard output, a banner ("Waiting for client
// to connect..." on the server), a block of parameters between dashed lines
// headed by the test's title, each side's address and GID, then the result
// table: a header line naming the columns and one row per message size
// (several with -a), closed by a dashed line:
//
//	---------------------------------------------------------------------------------------
//	                    RDMA_Write Latency Test
//	 Dual-port       : OFF		Device         : rxe0
//	 ...
//	 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]
//	 2       5000          10.55          2160.44      12.31       ...
//	---------------------------------------------------------------------------------------
//
// With -U (--report-unsorted) every sample is printed in the order
// measured, between the first header and the table's row, after a line
// "#, usec" (or "#, cycles" with -C), one "i, value" line each, closed by a
// dashed line and the header again; the values are in the table's unit,
// already halved where the table is:
//
//	 #bytes #iterations    t_min[usec] ...
//	#, usec
//	1, 3422.34
//	...
//	999, 11.587
//	---------------------------------------------------------------------------------------
//	 #bytes #iterations    t_min[usec] ...
//	 2       1000          11.40 ...
//
// The parser takes the columns from the header line rather than from a
// fixed layout: perftest before 4.x printed only t_min, t_max and
// t_typical, -D prints t_avg and "tps average", --cpu_util adds a
// CPU_Util column.
//
// What the figures mean (perftest's print_report_lat): the samples are the
// gaps between consecutive posts, one per iteration after the first; times
// are cycles over the estimated CPU MHz, halved for WRITE and SEND (one-way)
// and not for READ and ATOMIC (round trip). Sorted, the two largest samples
// are dropped: t_max is the second largest, t_typical the median of the
// rest, t_avg and t_stdev are over the rest, and the percentiles are taken
// by index.
package perftest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Stat names a statistic column of a latency table, spelt as perftest
// spells it without its unit.
type Stat string

// The statistic columns perftest 4.5 prints (Min to P999) and the one -D
// adds (TPSAverage).
const (
	Min        Stat = "t_min"
	Max        Stat = "t_max" // perftest's second-largest sample
	Typical    Stat = "t_typical"
	Avg        Stat = "t_avg"
	StdDev     Stat = "t_stdev"
	P99        Stat = "99% percentile"
	P999       Stat = "99.9% percentile"
	TPSAverage Stat = "tps average"
)

// ErrNoTable is returned when the output holds no latency result table, as
// when the test failed before measuring.
var ErrNoTable = errors.New("perftest: no latency result table in the output")

// ErrNoClock is returned when a table's figures are inf or nan. perftest
// divides cycle counts by a CPU frequency it estimates by timing a loop;
// when the estimate fails (it prints "Correlation coefficient r^2: ... <
// 0.9" on standard error, seen under load and under emulation) the
// frequency is 0, and with -F perftest divides by it instead of giving up.
// The measurement is lost; running the test again usually works.
var ErrNoClock = errors.New("perftest: figures are inf/nan: perftest could not estimate the CPU frequency (see \"Correlation coefficient\" on its standard error)")

// A SyntaxError reports a result table that cannot be read.
type SyntaxError struct {
	Line int    // 1-based line number in the output
	Text string // the offending line
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("perftest: line %d: %s: %q", e.Line, e.Msg, e.Text)
}

// A LatencyReport is what one latency test process printed.
type LatencyReport struct {
	// Title is the test's title line, e.g. "RDMA_Write Latency Test".
	Title string
	// Info holds the parameter block under the title: "Device" -> "rxe0",
	// "Link type" -> "Ethernet", "GID index" -> "1", "Mtu" -> "1024[B]".
	// Keys have their inner white space folded to single spaces.
	Info map[string]string
	// Units is the unit of each statistic column as the header gives it
	// ("usec").
	Units map[Stat]string
	// Rows holds one row per message size, in order.
	Rows []LatencyRow
	// Notes holds lines that appeared inside the table and are not rows,
	// such as warnings.
	Notes []string
	// Samples holds the per-iteration dump of -U, in the order measured,
	// in SampleUnit ("usec"): one-way for WRITE and SEND, as the table.
	// Nil without -U, and on the side that does not measure (the READ and
	// atomic servers).
	Samples    []float64
	SampleUnit string
}

// A LatencyRow is one row of a latency result table.
type LatencyRow struct {
	Bytes      int
	Iterations int
	// Values maps each statistic column the table had to its value, in
	// the column's unit (microseconds unless -C asked for cycles).
	Values map[Stat]float64
}

// Get returns the value of statistic s and whether the table had it.
func (r LatencyRow) Get(s Stat) (float64, bool) {
	v, ok := r.Values[s]
	return v, ok
}

// Row returns the row for a message size of bytes.
func (r *LatencyReport) Row(bytes int) (LatencyRow, bool) {
	for _, row := range r.Rows {
		if row.Bytes == bytes {
			return row, true
		}
	}
	return LatencyRow{}, false
}

// column is one column of a table header.
type column struct {
	name string // "#bytes", "#iterations" or a Stat
	unit string // between the brackets; "" when none
}

// ParseLatency reads a latency test's standard output. It returns
// ErrNoTable when there is no result table (the test failed before
// measuring) and a *SyntaxError when the table is malformed or has no row.
func ParseLatency(r io.Reader) (*LatencyReport, error) {
	rep := &LatencyReport{Info: map[string]string{}, Units: map[Stat]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)

	const (
		preamble = iota // before the title
		info            // the parameter block under the title
		between         // addresses and GIDs, until the table header
		table           // rows, until a dashed line
		samples         // -U's dump, until a dashed line
		done
	)
	state := preamble
	afterDash := false
	var cols []column
	headerLine := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		dashed := isDashed(trimmed)
		switch state {
		case preamble, between:
			if isHeader(trimmed) {
				var err error
				if cols, err = parseHeader(trimmed); err != nil {
					return nil, &SyntaxError{Line: n, Text: line, Msg: err.Error()}
				}
				for _, c := range cols[2:] {
					rep.Units[Stat(c.name)] = c.unit
				}
				headerLine = n
				state = table
				break
			}
			// The title: the first plain line after a dashed one. The
			// server's "* Waiting for client to connect... *" banner in
			// asterisks may come between (send and atomic servers print a
			// dashed line before it).
			if state == preamble && afterDash && trimmed != "" && !dashed && !strings.Contains(trimmed, ":") && !strings.HasPrefix(trimmed, "*") {
				rep.Title = trimmed
				state = info
			}
		case info:
			if dashed {
				state = between
				break
			}
			parseInfo(rep.Info, line)
		case table:
			if dashed {
				state = done
				break
			}
			if trimmed == "" {
				break
			}
			if unit, ok := strings.CutPrefix(trimmed, "#,"); ok && len(rep.Rows) == 0 && rep.Samples == nil {
				rep.SampleUnit = strings.TrimSpace(unit)
				rep.Samples = []float64{}
				state = samples
				break
			}
			f := strings.Fields(trimmed)
			if _, err := strconv.ParseUint(f[0], 10, 64); err != nil {
				rep.Notes = append(rep.Notes, trimmed)
				break
			}
			row, err := parseRow(f, cols)
			if errors.Is(err, ErrNoClock) {
				return nil, fmt.Errorf("%w (line %d)", err, n)
			}
			if err != nil {
				return nil, &SyntaxError{Line: n, Text: line, Msg: err.Error()}
			}
			rep.Rows = append(rep.Rows, row)
		case samples:
			if dashed {
				state = between // the header comes again, then the row
				break
			}
			v, err := parseSample(trimmed, len(rep.Samples)+1)
			if errors.Is(err, ErrNoClock) {
				return nil, fmt.Errorf("%w (line %d)", err, n)
			}
			if err != nil {
				return nil, &SyntaxError{Line: n, Text: line, Msg: err.Error()}
			}
			rep.Samples = append(rep.Samples, v)
		}
		if dashed {
			afterDash = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("perftest: reading the output: %w", err)
	}
	if cols == nil {
		return nil, ErrNoTable
	}
	if state == samples {
		return nil, &SyntaxError{Line: headerLine, Msg: fmt.Sprintf("the -U sample dump stops after %d samples with no closing line (did the test stop early?)", len(rep.Samples))}
	}
	if len(rep.Rows) == 0 {
		return nil, &SyntaxError{Line: headerLine, Msg: "result table has a header but no row (did the test stop early?)"}
	}
	return rep, nil
}

// parseSample reads one line of -U's dump, "i, value", the i-th sample.
func parseSample(s string, want int) (float64, error) {
	is, vs, ok := strings.Cut(s, ",")
	if !ok {
		return 0, fmt.Errorf("not a sample line \"i, value\" of -U's dump")
	}
	i, err := strconv.Atoi(strings.TrimSpace(is))
	if err != nil || i != want {
		return 0, fmt.Errorf("sample number %q: want %d (samples are numbered from 1 in order)", strings.TrimSpace(is), want)
	}
	vs = strings.TrimSpace(vs)
	if w := strings.TrimLeft(strings.ToLower(vs), "+-"); w == "inf" || w == "nan" {
		return 0, ErrNoClock
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("sample %d: %q is not a time", i, vs)
	}
	return v, nil
}

// isDashed reports whether s is one of perftest's separator lines.
func isDashed(s string) bool {
	return len(s) >= 10 && strings.Trim(s, "-") == ""
}

// isHeader reports whether s is a result table's header line.
func isHeader(s string) bool {
	return strings.HasPrefix(s, "#bytes")
}

// parseHeader splits a header line into its columns. Most column names end
// in a bracketed unit ("t_min[usec]"), some hold a space ("99% percentile
// [usec]", "tps average"), the first two start with '#'. A name runs until
// a word that ends in ']' or until the next word starting with '#'.
func parseHeader(s string) ([]column, error) {
	var cols []column
	var cur []string
	flush := func() {
		if len(cur) == 0 {
			return
		}
		name := strings.Join(cur, " ")
		c := column{name: name}
		if i := strings.LastIndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
			c = column{name: name[:i], unit: name[i+1 : len(name)-1]}
		}
		cols = append(cols, c)
		cur = cur[:0]
	}
	for _, w := range strings.Fields(s) {
		if strings.HasPrefix(w, "#") {
			flush()
		}
		cur = append(cur, w)
		if strings.HasPrefix(w, "#") || strings.HasSuffix(w, "]") {
			flush()
		}
	}
	flush()
	if len(cols) < 3 || cols[0].name != "#bytes" || cols[1].name != "#iterations" {
		return nil, errors.New("result table header does not start with #bytes #iterations and a statistic")
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c.name] {
			return nil, fmt.Errorf("column %q appears twice", c.name)
		}
		seen[c.name] = true
	}
	return cols, nil
}

// parseRow reads the fields of a table row.
func parseRow(f []string, cols []column) (LatencyRow, error) {
	if len(f) != len(cols) {
		return LatencyRow{}, fmt.Errorf("row has %d fields, the header %d columns", len(f), len(cols))
	}
	bytes, err := strconv.Atoi(f[0])
	if err == nil && bytes < 1 {
		err = fmt.Errorf("%d: want a size from 1", bytes)
	}
	if err != nil {
		return LatencyRow{}, fmt.Errorf("#bytes: %v", err)
	}
	iters, err := strconv.Atoi(f[1])
	if err == nil && iters < 1 {
		err = fmt.Errorf("%d: want a count from 1", iters)
	}
	if err != nil {
		return LatencyRow{}, fmt.Errorf("#iterations: %v", err)
	}
	row := LatencyRow{Bytes: bytes, Iterations: iters, Values: make(map[Stat]float64, len(cols)-2)}
	noClock := false
	for i, c := range cols[2:] {
		// printf's "inf", "-inf", "nan", "-nan": a failed clock estimate,
		// except in t_stdev, which perftest computes from squares of
		// truncated microseconds and can take the root of a negative
		// variance (seen at 4096 B in the VM): that column is left out.
		if w := strings.TrimLeft(strings.ToLower(f[i+2]), "+-"); w == "inf" || w == "nan" {
			if Stat(c.name) != StdDev {
				noClock = true
			}
			continue
		}
		v, err := strconv.ParseFloat(f[i+2], 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
			return LatencyRow{}, fmt.Errorf("%s: %q is not a number (a finite one, from 0)", c.name, f[i+2])
		}
		row.Values[Stat(c.name)] = v
	}
	if noClock {
		return LatencyRow{}, ErrNoClock
	}
	return row, nil
}

// parseInfo reads one line of the parameter block: one or two "key : value"
// pairs, two separated by a run of tabs (" Dual-port       : OFF\t\tDevice
// : rxe0"). A key may itself hold a tab (" rdma_cm QPs\t : OFF"), so pairs
// are split at double tabs only.
func parseInfo(m map[string]string, line string) {
	for _, part := range strings.Split(line, "\t\t") {
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		k = strings.Join(strings.Fields(k), " ")
		v = strings.TrimSpace(strings.Trim(v, "\t"))
		if k != "" {
			m[k] = v
		}
	}
}
