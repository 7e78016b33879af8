package perftestcmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/benchfile"
	"github.com/rdmabench/rdmabench/internal/cmdout"
	"github.com/rdmabench/rdmabench/internal/schedstat"
)

// A BenchResult is a benchmark's result for one size: its iteration
// count and configuration lines. Its figures are computed from its raw
// samples (samples.go), not read from its result line.
type BenchResult struct {
	Iters   int
	Config  map[string]string  // the configuration lines before it
	Metrics map[string]float64 // its result line's values by unit as written (user-insns/op)
}

// ParseBench reads the output of a benchmark binary and returns the result
// of tool t's benchmark at size: Benchmark<bench>/size=SIZE with t's other
// name parts in any order (a tool of one fixed size may have no size
// part). It fails on a malformed result line and when there is no such
// result (the benchmark skipped or failed).
func ParseBench(r io.Reader, fileName string, t *Tool, size int) (*BenchResult, error) {
	want := "/size=" + strconv.Itoa(size)
	name := "Benchmark" + t.bench + want + strings.Join(t.parts, "")
	var found *BenchResult
	_, err := benchfile.Read(r, fileName, benchfile.Fail, func(rec *benchfmt.Result) error {
		if !nameMatches(rec.Name, t, want) {
			return nil
		}
		if found != nil {
			return fmt.Errorf("%s: more than one result for %s (run with -test.count=1)", fileName, name)
		}
		found = &BenchResult{Iters: rec.Iters, Config: map[string]string{}, Metrics: map[string]float64{}}
		for _, v := range rec.Values {
			if v.OrigUnit != "" {
				found.Metrics[v.OrigUnit] = v.OrigValue
			} else {
				found.Metrics[v.Unit] = v.Value
			}
		}
		for _, c := range rec.Config {
			if c.File {
				found.Config[c.Key] = string(c.Value)
			}
		}
		return nil
	})
	if err != nil {
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
func nameMatches(n benchfmt.Name, t *Tool, want string) bool {
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

// benchPattern selects t's benchmark and, level by level, its name parts
// ("^BenchmarkRDMAAtomic$/^op=fetch_add$"), so that only the compared
// sub-benchmark runs and writes samples.
func benchPattern(t *Tool) string {
	p := "^Benchmark" + regexp.QuoteMeta(t.bench) + "$"
	for _, part := range t.parts {
		p += "/^" + regexp.QuoteMeta(strings.TrimPrefix(part, "/")) + "$"
	}
	return p
}

// benchArgs returns the benchmark binary's command line for iters
// iterations: every run records exactly iters samples.
func benchArgs(t *Tool, iters int, timeout time.Duration) []string {
	return []string{
		"-test.run=^$",
		"-test.bench=" + benchPattern(t),
		"-test.benchtime=" + strconv.Itoa(iters) + "x",
		"-test.count=1",
		"-test.timeout=" + timeout.String(),
	}
}

// An oursRun is one run of the benchmark binary.
type oursRun struct {
	result *BenchResult
	rtts   []int64         // its raw samples as round trips in ns
	sched  schedstat.Stats // of the whole process
	out    []byte          // standard output, then standard error
}

// runBench runs tool t's benchmark for one size, pinned to c.CPUs (the
// engine pins its own two threads), with no warm-up of its own (-warmup
// drops samples from both sides alike) and its raw samples written to
// samplesDir, and returns them.
func runBench(ctx context.Context, c *Config, t *Tool, size int, samplesDir string) (*oursRun, error) {
	// The binary's own -test.timeout fires first, with a goroutine dump;
	// the context kills it if that does not help.
	ctx, cancel := context.WithTimeout(ctx, c.Timeout+10*time.Second)
	defer cancel()
	run := &oursRun{}
	samplesDir, err := freshDir(samplesDir)
	if err != nil {
		return run, err
	}
	cmd := exec.CommandContext(ctx, c.Bench, benchArgs(t, c.Iters, c.Timeout)...)
	cmd.Env = append(os.Environ(),
		env.VarSizes+"="+strconv.Itoa(size),
		env.VarDevice+"="+c.Device,
		env.VarGIDIndex+"="+strconv.Itoa(c.GIDIndex),
		env.VarInline+"="+strconv.Itoa(c.inlineFor(t)),
		env.VarWarmup+"=0",
		env.VarSamplesDir+"="+samplesDir,
		env.VarCPUs+"="+c.cpusEnv(),
	)
	cmd.Env = append(cmd.Env, t.env...)
	cmd.Env = append(cmd.Env, c.extraEnv...)
	if c.peer != nil {
		cmd.Env = append(cmd.Env, env.VarPeer+"="+c.peer.addr)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err = cmd.Start(); err == nil {
		stop := c.watchSched(cmd.Process.Pid)
		err = cmd.Wait()
		run.sched = stop()
	}
	run.out = append(stdout.Bytes(), stderr.Bytes()...)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return run, fmt.Errorf("%s: timed out after %s, killed%s", c.Bench, c.Timeout+10*time.Second, cmdout.Tail(run.out, tailLines))
	}
	if err != nil {
		return run, fmt.Errorf("%s: %w%s", c.Bench, err, cmdout.Tail(run.out, tailLines))
	}
	if run.result, err = ParseBench(bytes.NewReader(stdout.Bytes()), c.Bench, t, size); err != nil {
		return run, fmt.Errorf("%w%s", err, cmdout.Tail(run.out, tailLines))
	}
	if run.result.Iters != c.Iters {
		return run, fmt.Errorf("%s: ran %d iterations, want %d", c.Bench, run.result.Iters, c.Iters)
	}
	if run.rtts, err = readOurSamples(samplesDir, t.halved); err != nil {
		return run, err
	}
	if len(run.rtts) != c.Iters {
		return run, fmt.Errorf("%s: %d raw samples for %d iterations", c.Bench, len(run.rtts), c.Iters)
	}
	return run, nil
}

// schedInterval is how often a run's scheduler statistics are read.
const schedInterval = 100 * time.Millisecond

// watchSched reads pid's scheduler statistics until stop when c.Sched
// asks for them. Off by default because the reader is not free: in the
// VM its reads of every thread's /proc files took host CPU from the
// polling vCPUs and raised our 4 KiB p99 several times over, and
// it reads ten threads of ours for one of perftest's client, so it
// weighs on the two sides unequally.
func (c *Config) watchSched(pid int) (stop func() schedstat.Stats) {
	if !c.Sched {
		return func() schedstat.Stats { return schedstat.Stats{} }
	}
	return schedstat.Watch(pid, schedInterval)
}

// tailLines is how much of a failed program's output an error quotes.
const tailLines = 8

// errNoPerftest says where perftest's tools are.
func errNoPerftest(prog string) error {
	return fmt.Errorf("perftest's %s is not on PATH: it exists inside the soft-RoCE VM (make compare runs rdmacompare there through bin/rxevm) or after apt-get install perftest", prog)
}

// freshDir makes an empty directory named after name: name itself when it
// is not there, else name-N beside it. A directory left by an earlier,
// interrupted comparison in the same -out must not lend this run its
// sample files, and is not ours to delete.
func freshDir(name string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "", err
	}
	if err := os.Mkdir(name, 0o755); err == nil || !errors.Is(err, fs.ErrExist) {
		return name, err
	}
	return os.MkdirTemp(filepath.Dir(name), filepath.Base(name)+"-")
}
