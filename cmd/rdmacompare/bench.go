package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/env"
)

// A BenchResult is a benchmark's result for one size.
type BenchResult struct {
	Iters   int
	Figures Figures           // in microseconds
	Config  map[string]string // the configuration lines before it
}

// ParseBench reads the output of a benchmark binary and returns the result
// of tool t's benchmark at size: Benchmark<bench>/size=SIZE with t's other
// name parts in any order (a tool of one fixed size may have no size
// part). It fails on a malformed result line and when there is no such
// result (the benchmark skipped or failed).
//
// The units are matched as the benchmark reported them. benchfmt tidies
// "p50-ns" into "p50-sec" and scales the value, but leaves a value of 0
// (a stddev of a steady run) untidied, so the tidied unit of one metric
// can differ between results; the original unit cannot.
func ParseBench(r io.Reader, fileName string, t *tool, size int) (*BenchResult, error) {
	rd := benchfmt.NewReader(r, fileName)
	want := "/size=" + strconv.Itoa(size)
	name := "Benchmark" + t.bench + want + strings.Join(t.parts, "")
	var found *BenchResult
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			if !nameMatches(rec.Name, t, want) {
				continue
			}
			if found != nil {
				return nil, fmt.Errorf("%s: more than one result for %s (run with -test.count=1)", fileName, name)
			}
			found = &BenchResult{Iters: rec.Iters, Figures: Figures{}, Config: map[string]string{}}
			for _, v := range rec.Values {
				unit, val := v.Unit, v.Value
				if v.OrigUnit != "" {
					unit, val = v.OrigUnit, v.OrigValue
				}
				for _, m := range metrics {
					if m.unit == unit {
						found.Figures[m.name] = val / 1e3 // ns -> us
					}
				}
			}
			for _, c := range rec.Config {
				if c.File {
					found.Config[c.Key] = string(c.Value)
				}
			}
			if len(found.Figures) == 0 {
				return nil, fmt.Errorf("%s: %s reported none of the latency metrics (min-ns, p50-ns, ...)", fileName, name)
			}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no result for %s", fileName, name)
	}
	return found, nil
}

// nameMatches reports whether a result's name is t's benchmark at the size
// part want ("/size=2"): the same base name, every part of t, the size
// part (optional for a tool of one fixed size), and nothing else but the
// -GOMAXPROCS suffix.
func nameMatches(n benchfmt.Name, t *tool, want string) bool {
	base, parts := n.Parts()
	if string(base) != t.bench {
		return false
	}
	need := append([]string{want}, t.parts...)
	seen := 0
	for _, p := range parts {
		ps := string(p)
		switch {
		case strings.HasPrefix(ps, "-"): // -GOMAXPROCS
		case slices.Contains(need, ps):
			seen++
		default:
			return false
		}
	}
	hasSize := slices.ContainsFunc(parts, func(p []byte) bool { return string(p) == want })
	return seen == len(need) || t.size > 0 && !hasSize && seen == len(need)-1
}

// benchArgs returns the benchmark binary's command line for iters
// iterations: every run records exactly iters samples.
func benchArgs(t *tool, iters int, timeout time.Duration) []string {
	return []string{
		"-test.run=^$",
		"-test.bench=^Benchmark" + t.bench + "$",
		"-test.benchtime=" + strconv.Itoa(iters) + "x",
		"-test.count=1",
		"-test.timeout=" + timeout.String(),
	}
}

// runBench runs tool t's benchmark for one size and returns its result
// and its whole output (standard output, then standard error).
func runBench(ctx context.Context, c *config, t *tool, size int) (*BenchResult, []byte, error) {
	// The binary's own -test.timeout fires first, with a goroutine dump;
	// the context kills it if that does not help.
	ctx, cancel := context.WithTimeout(ctx, c.timeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bench, benchArgs(t, c.iters, c.timeout)...)
	cmd.Env = append(os.Environ(),
		env.VarSizes+"="+strconv.Itoa(size),
		env.VarDevice+"="+c.device,
		env.VarGIDIndex+"="+strconv.Itoa(c.gidIndex),
		env.VarInline+"="+strconv.Itoa(c.inline),
	)
	cmd.Env = append(cmd.Env, t.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := append(stdout.Bytes(), stderr.Bytes()...)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, out, fmt.Errorf("%s: timed out after %s, killed%s", c.bench, c.timeout+10*time.Second, tailOf(out))
	}
	if err != nil {
		return nil, out, fmt.Errorf("%s: %w%s", c.bench, err, tailOf(out))
	}
	res, err := ParseBench(bytes.NewReader(stdout.Bytes()), c.bench, t, size)
	if err != nil {
		return nil, out, fmt.Errorf("%w%s", err, tailOf(out))
	}
	if res.Iters != c.iters {
		return nil, out, fmt.Errorf("%s: ran %d iterations, want %d", c.bench, res.Iters, c.iters)
	}
	return res, out, nil
}

// tailOf returns the last lines of a program's output, to quote in an
// error, or "" when there is none.
func tailOf(out []byte) string {
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return ""
	}
	lines := bytes.Split(out, []byte("\n"))
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return "; output ends:\n\t" + string(bytes.Join(lines, []byte("\n\t")))
}

// errNoPerftest says where perftest's tools are.
func errNoPerftest(prog string) error {
	return fmt.Errorf("perftest's %s is not on PATH: it exists inside the soft-RoCE VM (make compare runs rdmacompare there through bin/rxevm) or after apt-get install perftest", prog)
}
