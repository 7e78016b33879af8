// Package summary turns a go test -bench results file of the latency
// benchmarks into the one table a person reads first: a row per
// benchmark and size, columns min, p50, p90, p99, p99.9, max and stalls,
// each the median of the runs with its confidence interval computed as
// benchstat computes it (golang.org/x/perf/benchmath, median and
// order-statistic interval, 95%), in microseconds, with the
// configuration that matters on one line above the table.
//
// benchstat remains the tool for everything else (every unit, every
// config line, comparisons); this package reads the same file with
// benchfmt, so the two agree number for number.
package summary

import (
	"bufio"
	"bytes"
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
	Config map[string]string  // every config line in force for it
	Values map[string]float64 // by tidied unit ("p50-sec", "stalls")
}

// File is a results file as read by Read.
type File struct {
	Runs []Run
	// Warnings are the names of the host checks that warned
	// ("# warning (vm): ..."), each once, in the order first seen.
	Warnings []string
}

// warningLine is a host warning as hostinfo writes it: a comment that
// benchstat skips, so benchfmt never sees it.
var warningLine = regexp.MustCompile(`^# warning \(([^)]+)\):`)

// ReadFile reads the results file at path.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Read(bytes.NewReader(b), path)
}

// Read reads a results file: the result lines and config lines through
// benchfmt (units tidied, so "p50-ns" arrives as "p50-sec" in seconds),
// and the host warnings, which are comments, from the raw lines. name is
// the file's name for error messages. It is the package's one reader.
func Read(r io.Reader, name string) (*File, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	f := &File{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if m := warningLine.FindSubmatch(sc.Bytes()); m != nil && !slices.Contains(f.Warnings, string(m[1])) {
			f.Warnings = append(f.Warnings, string(m[1]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	info, err := benchfile.Read(bytes.NewReader(raw), name, benchfile.Skip, func(rec *benchfmt.Result) error {
		run := Run{Name: rec.Name.String(), Iters: rec.Iters, Config: map[string]string{}, Values: map[string]float64{}}
		for _, c := range rec.Config {
			run.Config[c.Key] = string(c.Value)
		}
		for _, v := range rec.Values {
			run.Values[v.Unit] = v.Value
		}
		f.Runs = append(f.Runs, run)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(f.Runs) == 0 {
		if len(info.Skipped) > 0 {
			return nil, fmt.Errorf("%s: no benchmark results: %w", name, errors.Join(info.Skipped...))
		}
		return nil, fmt.Errorf("%s: no benchmark results (want go test -bench output, e.g. make bench's bench.txt)", name)
	}
	return f, nil
}
