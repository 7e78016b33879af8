// Package progress follows go test -bench output as it streams and says
// how far the run has got: which benchmark, how many results of how
// many, and about how long is left. The output itself passes through
// unchanged, so the results file stays what benchstat reads.
package progress

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// Expected returns how many result lines a run of the suite's top-level
// benchmarks (go test -list names) gives with sizes message sizes and
// -count count: every benchmark runs once per size and repetition,
// except BenchmarkRDMAAtomic, whose two operations (fetch_add,
// compare_swap) run at 8 bytes only.
func Expected(benchmarks []string, sizes, count int) int {
	n := 0
	for _, b := range benchmarks {
		switch {
		case !strings.HasPrefix(b, "Benchmark"):
		case strings.HasPrefix(b, "BenchmarkRDMAAtomic"):
			n += 2 * count
		default:
			n += sizes * count
		}
	}
	return n
}

// Filter copies its input to its output line by line and writes a
// progress line to Status for every result, and every failure line as it
// comes. Total is the number of results expected (Expected); when more
// arrive, the total grows with them. Now is the clock (time.Now when
// nil).
type Filter struct {
	Total  int
	Count  int // -count: each result's repetition is shown out of it
	Status io.Writer
	// Terminal: rewrite one status line in place (\r) instead of
	// writing a line per result.
	Terminal bool
	Now      func() time.Time
}

// Run copies in to out until in ends, and returns the number of results.
func (f *Filter) Run(in io.Reader, out io.Writer) (int, error) {
	now := f.Now
	if now == nil {
		now = time.Now
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	start := now()
	var first time.Time
	done, rep := 0, 0
	last := ""
	for sc.Scan() {
		line := sc.Text()
		if _, err := io.WriteString(out, line+"\n"); err != nil {
			return done, err
		}
		switch {
		case isResult(line):
			done++
			if done == 1 {
				first = now()
			}
			name := strings.Fields(line)[0]
			rep++
			if name != last {
				rep = 1
			}
			last = name
			f.status(f.line(done, name, rep, now().Sub(start), left(done, f.Total, now().Sub(first))))
		case isFailure(line):
			f.clear()
			fmt.Fprintln(f.Status, line)
		}
	}
	if f.Terminal && done > 0 {
		fmt.Fprintln(f.Status)
	}
	return done, sc.Err()
}

func (f *Filter) line(done int, name string, rep int, elapsed, left time.Duration) string {
	total := max(f.Total, done)
	s := fmt.Sprintf("[%d/%d] %s", done, total, strings.TrimPrefix(name, "Benchmark"))
	if f.Count > 0 {
		s += fmt.Sprintf(" run %d/%d", rep, f.Count)
	}
	s += "  elapsed " + clock(elapsed)
	switch {
	case done >= total:
		s += "  done"
	case left < 0:
		s += "  time left: estimating"
	default:
		s += "  about " + clock(left) + " left"
	}
	return s
}

func (f *Filter) status(s string) {
	if f.Terminal {
		fmt.Fprintf(f.Status, "\r\x1b[K%s", s)
		return
	}
	fmt.Fprintln(f.Status, s)
}

func (f *Filter) clear() {
	if f.Terminal {
		fmt.Fprint(f.Status, "\r\x1b[K")
	}
}

// left estimates the time to the last result from the pace since the
// first one (the boot and the first connection come before it and are
// not repeated): -1 until two results give a pace.
func left(done, total int, sinceFirst time.Duration) time.Duration {
	if done < 2 {
		return -1
	}
	per := sinceFirst / time.Duration(done-1)
	return per * time.Duration(max(total-done, 0))
}

func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// isResult reports whether line is a benchmark result: the name, then
// the iteration count.
func isResult(line string) bool {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
		return false
	}
	for _, c := range fields[1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isFailure reports whether line tells of a failure a person should see
// at once.
func isFailure(line string) bool {
	for _, p := range []string{"--- FAIL", "FAIL", "panic:", "fatal error:", "rxevm:"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
