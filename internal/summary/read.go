// Package summary turns a go test -bench results file of the latency
// benchmarks into the one table a person reads first: a row per
// benchmark and size, columns min, p50, p90, p99, p99.9, max and stalls,
// each the median of the runs with its confidence interval computed as
// benchstat computes it (golang.org/x/perf/benchmath, median and
// order-statistic interval, 95%), in microseconds, with the
// configuration that matters on one line above the table. Runs that read
// their NIC counters (RDMABENCH_COUNTERS=1) add a column per counter that
// explains a tail (retries, sequence errors, ...), beside the stalls.
//
// benchstat remains the tool for everything else (every unit, every
// config line, comparisons); this package reads the same file with
// benchfmt, so the two agree number for number.
package summary

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"

	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/internal/benchfile"
)

// Run is one result line: one benchmark, one size, one -count repetition.
type Run struct {
	Name   string             // full name, "RDMAWrite/size=2" (benchfmt drops "Benchmark")
	Iters  int                // round trips measured
	Config map[string]string  // every config line in force for it; shared by runs with the same lines: read only
	Values map[string]float64 // by tidied unit ("p50-sec", "stalls")
}

// File is a results file as read by Read.
type File struct {
	Runs []Run
	// Warnings are the names of the host checks that warned
	// ("# warning (vm): ..."), each once, in the order first seen.
	Warnings []string
	// Skipped are the first benchfile.MaxSkipped malformed result lines
	// (NaN, infinite or negative values among them), SkippedCount how
	// many there were.
	Skipped      []error
	SkippedCount int
}

// warningLine is a host warning as hostinfo writes it: a comment that
// benchstat skips, so benchfmt never sees it.
var warningLine = regexp.MustCompile(`^# warning \(([^)]+)\):`)

// ReadFile reads the results file at path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a results file: the result lines and config lines through
// benchfmt (units tidied, so "p50-ns" arrives as "p50-sec" in seconds),
// and the host warnings, which are comments, from the same pass. name is
// the file's name for error messages. It is the package's one reader; it
// streams, within benchfile's bounds, and keeps what the table needs: the
// runs' values, with each distinct configuration held once.
func Read(r io.Reader, name string) (*File, error) {
	f := &File{}
	comment := func(line []byte) {
		if m := warningLine.FindSubmatch(line); m != nil && !slices.Contains(f.Warnings, string(m[1])) {
			f.Warnings = append(f.Warnings, string(m[1]))
		}
	}
	var config map[string]string
	names := map[string]string{}
	info, err := benchfile.ReadOptions(r, name, benchfile.Options{Malformed: benchfile.Skip, Comment: comment}, func(rec *benchfmt.Result) error {
		if !sameConfig(config, rec.Config) {
			config = make(map[string]string, len(rec.Config))
			for _, c := range rec.Config {
				config[c.Key] = string(c.Value)
			}
		}
		n, ok := names[string(rec.Name)]
		if !ok {
			n = rec.Name.String()
			names[string(rec.Name)] = n
		}
		run := Run{Name: n, Iters: rec.Iters, Config: config, Values: make(map[string]float64, len(rec.Values))}
		for _, v := range rec.Values {
			run.Values[v.Unit] = v.Value
		}
		f.Runs = append(f.Runs, run)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.Skipped, f.SkippedCount = info.Skipped, info.SkippedCount
	if len(f.Runs) == 0 {
		if len(info.Skipped) > 0 {
			more := ""
			if info.SkippedCount > len(info.Skipped) {
				more = fmt.Sprintf(" (the first %d of %d malformed lines)", len(info.Skipped), info.SkippedCount)
			}
			return nil, fmt.Errorf("%s: no benchmark results%s: %w", name, more, errors.Join(info.Skipped...))
		}
		return nil, fmt.Errorf("%s: no benchmark results (want go test -bench output, e.g. make bench's bench.txt)", name)
	}
	return f, nil
}

// sameConfig reports whether m holds exactly the configuration cs: then
// the run shares the previous run's map.
func sameConfig(m map[string]string, cs []benchfmt.Config) bool {
	if m == nil || len(m) != len(cs) {
		return false
	}
	for _, c := range cs {
		if v, ok := m[c.Key]; !ok || v != string(c.Value) {
			return false
		}
	}
	return true
}
