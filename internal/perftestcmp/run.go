// Package perftestcmp runs perftest's latency tests and the rdmabench
// benchmarks that measure the same thing side by side on one RDMA device,
// in paired rounds, and judges how far apart they are (cmd/rdmacompare is
// its command line). Both sides' figures come from their raw samples by
// one definition; the verdict comes from the per-round ratios through
// internal/abtest's paired test.
package perftestcmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/perftest"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// A Config is one comparison: what to run, where, and how many times.
type Config struct {
	Bench    string // the rdmabench test binary
	Sizes    []int  // message sizes in bytes
	Iters    int    // iterations per run, the same for both sides
	Rounds   int    // rounds; each runs both sides for every tool and size
	Device   string // RDMA device
	GIDIndex int
	Inline   int // largest inline message in bytes, for both; InlineDefault: perftest's default for each row
	// InlineFamily is the device's family in perftest's inline table,
	// used with InlineDefault.
	InlineFamily spec.Family
	Timeout      time.Duration // a run (a perftest pair or a benchmark) of Iters operations is killed after it (workTimeout: longer ones)
	ServerAddr   string        // where perftest's client reaches its server (TCP exchange only)
	Port         int           // first TCP port for perftest; each pair takes the next free one
	OutDir       string        // raw outputs and the table; none when empty
	Strict       bool          // exit status 1 when a target is missed
	Retries      int           // perftest runs again when it could not estimate the CPU frequency
	Tools        []*Tool
	ToolsAll     bool          // -tools all: leave out what this perftest lacks
	CPUs         [2]int        // initiator, responder: both sides'
	PinPerftest  bool          // perftest on CPUs too (else unpinned)
	Warmup       int           // samples dropped from the start of each side's run
	TimeLimit    time.Duration // 0: run every round
	PeerBin      string        // rdmapeer: our responder in a process of its own; empty: loopback in one process
	Sched        bool          // read both sides' scheduler statistics during the runs (it perturbs them)

	// WorkIters is the shorter run's operations in the work runs (the
	// longer runs twice as many); 0: no work runs.
	WorkIters int
	// WorkBench is our benchmark binary built without markers
	// (-DRB_NO_MARKERS), measured by the method as perftest is: the
	// check of the method against our markers. Empty: no check.
	WorkBench string
	// WorkTolerance fails the comparison (exit status 3) when the method's
	// user figure of ours is further than this fraction from our markers';
	// WorkKernelTolerance the same for the kernel's (on all vCPUs); 0:
	// not judged.
	WorkTolerance, WorkKernelTolerance float64

	notes         []string          // what was left out, for the report
	extraEnv      []string          // more environment for both sides' programs (the work runs')
	rxDepth       int               // perftest's -r where set (the work runs' send over RC)
	perftestPaths map[string]string // program -> path, resolved from PATH
	peer          *peerProc         // with PeerBin, while Run runs
}

// cpusEnv is RDMABENCH_CPUS for the benchmark: initiator, responder.
func (c *Config) cpusEnv() string { return fmt.Sprintf("%d,%d", c.CPUs[0], c.CPUs[1]) }

// perftestCPU returns the CPU for perftest's client (side 0, which
// measures, as our initiator) or server (1, as our responder); the zero
// CPU when perftest runs unpinned.
func (c *Config) perftestCPU(side int) env.CPU {
	if !c.PinPerftest {
		return env.CPU{}
	}
	return env.PinTo(c.CPUs[side])
}

// Run does the comparison, prints the table to stdout and the progress to
// stderr, and returns the exit status (abtest's table): 0; 3 when a run
// failed; 2 when a tool is missing; with Strict, 1 when a target was
// missed (or had no figures) and else 4 when one is undecided.
func Run(ctx context.Context, c *Config, stdout, stderr io.Writer) int {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "rdmacompare: "+format+"\n", args...) }
	if err := c.resolveTools(); err != nil {
		logf("%v", err)
		return abtest.ExitUsage
	}
	if err := c.dropUnsupported(ctx); err != nil {
		logf("%v", err)
		return abtest.ExitUsage
	}
	for _, n := range c.notes {
		logf("%s", n)
	}
	if c.OutDir != "" {
		if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
			logf("%v", err)
			return abtest.ExitUsage
		}
	}
	save := func(name string, b []byte) {
		if c.OutDir == "" {
			return
		}
		if err := os.WriteFile(filepath.Join(c.OutDir, name), b, 0o644); err != nil {
			logf("saving raw output: %v", err)
		}
	}

	if c.PeerBin != "" {
		p, err := startPeer(ctx, c)
		if err != nil {
			logf("%v", err)
			return abtest.ExitUsage
		}
		c.peer = p
		defer func() { save("rdmapeer.txt", p.stop()) }()
	}

	var (
		samples []Sample
		h       = Header{Device: c.Device, GIDIndex: c.GIDIndex, Iters: c.Iters, Rounds: c.Rounds, Tools: c.Tools, Notes: c.notes,
			CPUs: c.CPUs, PinPerftest: c.PinPerftest, Warmup: c.Warmup}
		failed int
		port   = c.Port
		mtu    int // the path MTU our side reported, once it has
		tooBig = map[string]bool{}
		// ours' results per tool and size, for the markers' work figure
		benchResults = map[string][]*BenchResult{}
	)
	if c.peer != nil {
		h.Notes = append(h.Notes, fmt.Sprintf("ours ran as two processes, as perftest does: the benchmark's initiator on CPU %d and rdmapeer's responder on CPU %d (-peer)", c.CPUs[0], c.CPUs[1]))
	}
	start := time.Now()
rounds:
	for round := 1; round <= c.Rounds; round++ {
		// -time-limit: stop before a round that would not end in time
		// (judged by the rounds so far), and judge the rounds done.
		if elapsed := time.Since(start); c.TimeLimit > 0 && round > 1 && elapsed+elapsed/time.Duration(round-1) > c.TimeLimit {
			h.Notes = append(h.Notes, fmt.Sprintf("stopped after %d of %d rounds: the next would end past -time-limit %s", round-1, c.Rounds, c.TimeLimit))
			logf("%s", h.Notes[len(h.Notes)-1])
			break rounds
		}
		for _, t := range c.Tools {
			for _, size := range t.sizesFor(c.Sizes) {
				if t.ud && mtu > 0 && size > mtu {
					// perftest -c UD refuses it as our benchmark does:
					// not a failure, a size this transport lacks.
					if key := fmt.Sprintf("%s/%d", t.name, size); !tooBig[key] {
						tooBig[key] = true
						h.Notes = append(h.Notes, fmt.Sprintf("%s size %d: not measured: a UD message must fit in one MTU (%d B here)", t.name, size, mtu))
					}
					continue
				}
				smp := Sample{Round: round, Tool: t.name, Size: size, PerftestFirst: round%2 == 1}
				tag := fmt.Sprintf("round%d-%ssize%d", round, t.tag(), size)
				writeLat := t.perftest
				var errs []error
				runPT := func() {
					for try := 1; ; try++ {
						port = freePort(port)
						row, raw, err := runPerftest(ctx, c, t, size, port)
						port++
						name := tag + "-perftest"
						if try > 1 {
							name += fmt.Sprintf("-try%d", try)
						}
						save(name+"-server.txt", raw.server)
						save(name+"-client.txt", raw.client)
						if errors.Is(err, perftest.ErrNoClock) && try <= c.Retries && ctx.Err() == nil {
							logf("round %d size %d: %s could not estimate the CPU frequency (inf/nan figures); running it again", round, size, writeLat)
							continue
						}
						if err == nil {
							smp.Perftest, err = figuresOf(rttsFromPerftest(raw.report.Samples, t.halved), c.Warmup, t.halved)
						}
						if err != nil {
							errs = append(errs, err)
							return
						}
						smp.PerftestPrinted = perftestFigures(row)
						smp.PerftestSched = raw.sched
						if h.PerftestSetup == nil {
							h.PerftestSetup = setupOf(raw.report.Info, perftestSetupKeys)
						}
						return
					}
				}
				runOurs := func() {
					dir, cleanup, err := c.samplesDir(tag + "-ours-samples")
					if err == nil {
						var r *oursRun
						r, err = runBench(ctx, c, t, size, dir)
						save(tag+"-bench.txt", r.out)
						smp.OursSched = r.sched
						if err == nil {
							smp.Ours, err = figuresOf(r.rtts, c.Warmup, t.halved)
						}
						if err == nil {
							key := fmt.Sprintf("%s/%d", t.name, size)
							benchResults[key] = append(benchResults[key], r.result)
							if v, perr := strconv.Atoi(r.result.Config["rdma-mtu"]); perr == nil && mtu == 0 {
								mtu = v
							}
							if h.OursSetup == nil {
								h.OursSetup = setupOf(r.result.Config, oursSetupKeys)
							}
						}
						cleanup()
					}
					if err != nil {
						errs = append(errs, err)
					}
				}
				if smp.PerftestFirst {
					runPT()
					runOurs()
				} else {
					runOurs()
					runPT()
				}
				if len(errs) > 0 {
					smp.Err = errors.Join(errs...)
					failed++
					logf("round %d %s size %d: %v", round, t.name, size, smp.Err)
				}
				logf("round %d/%d %s size %d: perftest p50 %s p99 %s | ours p50 %s p99 %s | ratio p50 %s p99 %s",
					round, c.Rounds, t.name, size, figure(smp.Perftest, "p50"), figure(smp.Perftest, "p99"),
					figure(smp.Ours, "p50"), figure(smp.Ours, "p99"), ratio(smp.ratio("p50")), ratio(smp.ratio("p99")))
				samples = append(samples, smp)
				if ctx.Err() != nil {
					logf("interrupted")
					return abtest.ExitFailed
				}
			}
		}
	}

	works, whyNoWork := c.runWork(ctx, samples, benchResults, save, logf)
	if ctx.Err() != nil {
		logf("interrupted")
		return abtest.ExitFailed
	}
	sums := Summarize(samples, c.Tools, c.Sizes, DefaultTargets, defaultJudge)
	var table bytes.Buffer
	if err := Print(&table, h, sums); err != nil {
		logf("%v", err)
		return abtest.ExitFailed
	}
	if err := PrintWork(&table, works, whyNoWork, c.WorkIters); err != nil {
		logf("%v", err)
		return abtest.ExitFailed
	}
	for _, w := range works {
		if w.Err != nil {
			failed++
		} else if err := w.checkWithin(c.WorkTolerance, c.WorkKernelTolerance); err != nil {
			logf("work %s size %d: %v", w.Tool.name, w.Size, err)
			failed++
		}
	}
	save("compare.txt", table.Bytes())
	if _, err := stdout.Write(table.Bytes()); err != nil {
		logf("%v", err)
		return abtest.ExitFailed
	}
	if failed > 0 {
		logf("%d of %d runs (round, tool, size) failed; see the errors above", failed, len(samples))
		return abtest.ExitFailed
	}
	if c.Strict {
		code := abtest.ExitPass
		for _, s := range sums {
			for _, j := range s.Judgement {
				switch {
				case j.Failed():
					code = abtest.WorstStatus(code, abtest.ExitRegressed)
				case j.Outcome == Undecided:
					code = abtest.WorstStatus(code, abtest.ExitUndecided)
				}
			}
		}
		return code
	}
	return abtest.ExitPass
}

// samplesDir returns the directory for one benchmark run's raw samples:
// under -out, kept; without -out, a temporary one that cleanup removes.
func (c *Config) samplesDir(name string) (dir string, cleanup func(), err error) {
	if c.OutDir != "" {
		// Not created here: runBench's freshDir makes it, or a fresh
		// sibling when an earlier run left one of that name.
		return filepath.Join(c.OutDir, name), func() {}, nil
	}
	dir, err = os.MkdirTemp("", "rdmacompare-samples-")
	return dir, func() { os.RemoveAll(dir) }, err
}

// dropUnsupported asks each perftest program for its usage and leaves out
// the tools whose options it lacks: with -tools all, with a note for the
// report; a tool named in -tools is an error that says what to do.
func (c *Config) dropUnsupported(ctx context.Context) error {
	if len(c.Tools) == 0 {
		return nil
	}
	usage := map[string]string{}
	var keep []*Tool
	for _, t := range c.Tools {
		var missing []string
		for _, opt := range t.longOptions() {
			path := c.perftestPaths[t.perftest]
			if _, ok := usage[path]; !ok {
				uctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				out, _ := exec.CommandContext(uctx, path, "--help").CombinedOutput() // perftest exits non-zero after its usage
				cancel()
				usage[path] = string(out)
			}
			if !strings.Contains(usage[path], opt) {
				missing = append(missing, "--"+opt)
			}
		}
		if len(missing) == 0 {
			keep = append(keep, t)
			continue
		}
		why := fmt.Sprintf("%s here (%s) has no %s", t.perftest, c.perftestPaths[t.perftest], strings.Join(missing, ", "))
		if !c.ToolsAll {
			return fmt.Errorf("-tools %s: %s; install a perftest that has it, or leave %s out of -tools", t.name, why, t.name)
		}
		c.notes = append(c.notes, fmt.Sprintf("%s: not measured: %s", t.name, why))
	}
	c.Tools = keep
	return nil
}

// resolveTools finds the perftest programs on PATH and checks the
// benchmark binary.
func (c *Config) resolveTools() error {
	if err := c.resolveToolPaths(); err != nil {
		return err
	}
	fi, err := os.Stat(c.Bench)
	if err != nil {
		return fmt.Errorf("-bench: %w (build it with go test -c -o bin/rdmabench.test .)", err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("-bench %s: not an executable file", c.Bench)
	}
	return nil
}

// resolveToolPaths finds the perftest programs on PATH.
func (c *Config) resolveToolPaths() error {
	c.perftestPaths = map[string]string{}
	for _, t := range c.Tools {
		p, err := exec.LookPath(t.perftest)
		if err != nil {
			return errNoPerftest(t.perftest)
		}
		c.perftestPaths[t.perftest] = p
	}
	return nil
}

// DefaultRounds is enough rounds for the judge's 95% interval of the
// median ratio to be narrower than the widest pair of rounds (6 gives
// only [min, max]).
const DefaultRounds = 10
