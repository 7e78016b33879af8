// Command rdmacompare sets perftest's latency tests and the rdmabench
// benchmarks that measure the same thing side by side on one RDMA device,
// on equal terms, in paired rounds, and says how far apart they are.
//
//	rdmacompare -bench bin/rdmabench.test [-tools write,read] [-sizes 2,4096] [-iters 5000] [-rounds 10] [-warmup 0] [-cpus 2,3]
//
// make compare builds the benchmark binary and runs rdmacompare inside one
// boot of the soft-RoCE VM (cmd/rxevm), where perftest is installed. Under
// emulation absolute figures mean little; ratios taken back to back in one
// boot do.
//
// -tools picks rows of a table (tools.go): write (ib_write_lat against
// BenchmarkRDMAWrite, the default), read (ib_read_lat, BenchmarkRDMARead),
// send and send-ud (ib_send_lat -c RC/UD, BenchmarkRDMASend with
// RDMABENCH_TRANSPORT), atomic (ib_atomic_lat -A FETCH_AND_ADD, 8 bytes,
// BenchmarkRDMAAtomic/op=fetch_add), write-imm (ib_write_lat
// --write_with_imm, BenchmarkRDMAWriteImm), or all. For each round, tool
// and size, in turn, it runs
//
//   - the perftest test as a server pinned to our responder's CPU and a
//     client pinned to our initiator's (-cpus; -pin=false leaves perftest
//     unpinned), with -d DEVICE -x GID-INDEX -s SIZE -n ITERS -p PORT -F
//     -U and the row's options, and reads the client's -U samples and its
//     table;
//   - the benchmark binary: -test.bench selecting the row's benchmark and
//     sub-benchmark, -test.benchtime=ITERSx -test.count=1, with
//     RDMABENCH_SIZES, RDMABENCH_DEVICE, RDMABENCH_GID_INDEX,
//     RDMABENCH_CPUS, RDMABENCH_WARMUP=0 and RDMABENCH_SAMPLES_DIR set, and
//     reads its raw samples.
//
// Both sides' statistics come from their raw samples by one definition
// (latency.Recorder), after dropping the first -warmup samples of each run
// on both sides (0 by default: perftest has no warm-up). perftest's own
// printed figures are shown beside, for reference. The queue settings are
// perftest's on both sides (rdmalat uses perftest's latency-test defaults).
//
// Odd rounds run perftest first, even rounds ours. The verdict on each
// target (p50 within ±2%, p99 within ±5%) comes from the per-round ratios
// ours/perftest: met when the 95% interval of their median lies within the
// target, missed when it lies wholly outside, undecided otherwise (more
// -rounds). Every run is killed after -timeout; a perftest run whose CPU
// frequency estimate failed (inf/nan figures) is repeated, up to -retries
// times. Each round also shows what the scheduler did to perftest's client
// and to our process (migrations/preemptions, from /proc/PID/task/*/sched).
//
// Every raw output (both perftest sides, the benchmark, its samples) and
// the table go under -out, by default $RXEVM_OUT (which rxevm -out brings
// back to the host). -time-limit stops between rounds when the next would
// end too late, and judges the rounds done. The exit status is 1 when a run failed, or with
// -strict when a target was missed; 2 for bad usage or a missing tool.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/perftest"
	"github.com/rdmabench/rdmabench/rdmalat"
)

// config is the command line.
type config struct {
	bench         string
	sizes         []int
	iters         int
	rounds        int
	device        string
	gidIndex      int
	inline        int
	timeout       time.Duration
	serverAddr    string
	port          int
	outDir        string
	strict        bool
	retries       int
	tools         []*tool
	toolsAll      bool              // -tools all: leave out what this perftest lacks
	notes         []string          // what was left out, for the report
	perftestPaths map[string]string // program -> path, resolved from PATH
	cpus          [2]int            // initiator, responder: both sides'
	pinPerftest   bool              // perftest on cpus too (else unpinned)
	warmup        int               // samples dropped from the start of each side's run
	timeLimit     time.Duration     // 0: run every round
}

// cpusEnv is RDMABENCH_CPUS for the benchmark: initiator, responder.
func (c *config) cpusEnv() string { return fmt.Sprintf("%d,%d", c.cpus[0], c.cpus[1]) }

// perftestCPU returns the CPU for perftest's client (side 0, which
// measures, as our initiator) or server (1, as our responder); -1 when
// perftest runs unpinned.
func (c *config) perftestCPU(side int) int {
	if !c.pinPerftest {
		return -1
	}
	return c.cpus[side]
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("rdmacompare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defDevice := os.Getenv(env.VarDevice)
	if defDevice == "" {
		defDevice = "rxe0"
	}
	sizes := fs.String("sizes", "2,4096", "message `sizes` in bytes, comma-separated")
	toolList := fs.String("tools", "write", "perftest tests to compare, comma-separated: "+toolNames()+", or all")
	fs.StringVar(&c.bench, "bench", "", "the rdmabench test `binary` (go test -c -o bin/rdmabench.test .); required")
	fs.IntVar(&c.iters, "iters", 5000, "iterations per run, the same for both (ib_write_lat -n, -test.benchtime=Nx)")
	fs.IntVar(&c.rounds, "rounds", defaultRounds, "rounds; each runs both sides back to back for every tool and size (at least 6: the fewest with a 95% interval of the median ratio)")
	cpuList := fs.String("cpus", "", "`A,B`: CPUs for both sides, the initiator (perftest's client) on A and the responder (its server) on B (default: the last two this process may use, as the benchmarks choose)")
	fs.BoolVar(&c.pinPerftest, "pin", true, "pin perftest to -cpus as the benchmark pins itself; -pin=false runs perftest unpinned (to measure what pinning does)")
	fs.DurationVar(&c.timeLimit, "time-limit", 0, "start no round that would end after this `duration` (judged by the rounds so far) and judge the rounds done; 0: none")
	fs.IntVar(&c.warmup, "warmup", 0, "drop the first `N` samples of every run, on both sides (0: keep all, as perftest does)")
	fs.StringVar(&c.device, "device", defDevice, "RDMA `device` (default $RDMABENCH_DEVICE, else rxe0)")
	fs.IntVar(&c.gidIndex, "gid-index", 1, "GID `index` for both (ib_write_lat -x, RDMABENCH_GID_INDEX); 1 is the IPv4 RoCE v2 GID in the VM")
	fs.IntVar(&c.inline, "inline", 0, "largest inline message in `bytes` for both (ib_write_lat -I, RDMABENCH_INLINE); perftest 4.5 on rxe sends nothing inline by default")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "kill a run (a perftest pair or a benchmark) after this `duration`")
	fs.StringVar(&c.serverAddr, "server-addr", "127.0.0.1", "`address` the ib_write_lat client reaches its server at (perftest's TCP exchange only)")
	fs.IntVar(&c.port, "port", 18515, "first TCP `port` for ib_write_lat; each pair takes the next free one")
	fs.StringVar(&c.outDir, "out", os.Getenv("RXEVM_OUT"), "`dir`ectory for the raw outputs and the table (default $RXEVM_OUT; none when empty)")
	fs.BoolVar(&c.strict, "strict", false, "exit with status 1 when a target is missed")
	fs.IntVar(&c.retries, "retries", 2, "run ib_write_lat again up to `N` times when it could not estimate the CPU frequency (inf/nan figures)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmacompare -bench BINARY [flags]\n\n"+
			"Runs perftest's ib_write_lat and BenchmarkRDMAWrite interleaved and compares them.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.bench == "" {
		return nil, errors.New("-bench is required: the rdmabench test binary (go test -c -o bin/rdmabench.test .)")
	}
	var err error
	c.toolsAll = strings.TrimSpace(*toolList) == "all"
	if c.tools, err = parseTools(*toolList); err != nil {
		return nil, fmt.Errorf("-tools: %w", err)
	}
	if c.sizes, err = env.ParseSizes("-sizes", *sizes); err != nil {
		return nil, err
	}
	if c.iters < 2 {
		return nil, fmt.Errorf("-iters %d: want at least 2 (perftest's samples are gaps between iterations)", c.iters)
	}
	if c.rounds < 1 {
		return nil, fmt.Errorf("-rounds %d: want at least 1", c.rounds)
	}
	if c.warmup < 0 || c.warmup >= c.iters-1 {
		return nil, fmt.Errorf("-warmup %d: want 0 up to fewer than -iters %d minus one (perftest measures iters-1 samples)", c.warmup, c.iters)
	}
	if c.cpus, err = parseCPUs(*cpuList); err != nil {
		return nil, fmt.Errorf("-cpus: %w", err)
	}
	if c.timeout <= 0 {
		return nil, fmt.Errorf("-timeout %s: want a positive duration", c.timeout)
	}
	if c.port < 1 || c.port > 65535 {
		return nil, fmt.Errorf("-port %d: want 1..65535", c.port)
	}
	return c, nil
}

// defaultRounds is enough rounds for the judge's 95% interval of the
// median ratio to be narrower than the widest pair of rounds (6 gives
// only [min, max]).
const defaultRounds = 10

// parseCPUs reads "2,3"; "" picks the benchmarks' default pair.
func parseCPUs(s string) ([2]int, error) {
	if strings.TrimSpace(s) == "" {
		return rdmalat.DefaultCPUs()
	}
	f := strings.Split(s, ",")
	var cpus [2]int
	if len(f) != 2 {
		return cpus, fmt.Errorf("%q: want two CPU numbers, initiator and responder, such as 2,3", s)
	}
	for i := range f {
		n, err := strconv.Atoi(strings.TrimSpace(f[i]))
		if err != nil || n < 0 {
			return cpus, fmt.Errorf("%q: %q is not a CPU number (example: -cpus 2,3)", s, f[i])
		}
		cpus[i] = n
	}
	return cpus, nil
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "rdmacompare: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, c, os.Stdout, os.Stderr))
}

// run does the comparison and returns the exit status.
func run(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "rdmacompare: "+format+"\n", args...) }
	if err := c.resolveTools(); err != nil {
		logf("%v", err)
		return 2
	}
	if err := c.dropUnsupported(ctx); err != nil {
		logf("%v", err)
		return 2
	}
	for _, n := range c.notes {
		logf("%s", n)
	}
	if c.outDir != "" {
		if err := os.MkdirAll(c.outDir, 0o755); err != nil {
			logf("%v", err)
			return 2
		}
	}
	save := func(name string, b []byte) {
		if c.outDir == "" {
			return
		}
		if err := os.WriteFile(filepath.Join(c.outDir, name), b, 0o644); err != nil {
			logf("saving raw output: %v", err)
		}
	}

	var (
		samples []Sample
		h       = Header{Device: c.device, GIDIndex: c.gidIndex, Iters: c.iters, Rounds: c.rounds, Tools: c.tools, Notes: c.notes,
			CPUs: c.cpus, PinPerftest: c.pinPerftest, Warmup: c.warmup}
		failed int
		port   = c.port
		mtu    int // the path MTU our side reported, once it has
		tooBig = map[string]bool{}
	)
	start := time.Now()
rounds:
	for round := 1; round <= c.rounds; round++ {
		// -time-limit: stop before a round that would not end in time
		// (judged by the rounds so far), and judge the rounds done.
		if elapsed := time.Since(start); c.timeLimit > 0 && round > 1 && elapsed+elapsed/time.Duration(round-1) > c.timeLimit {
			h.Notes = append(h.Notes, fmt.Sprintf("stopped after %d of %d rounds: the next would end past -time-limit %s", round-1, c.rounds, c.timeLimit))
			logf("%s", h.Notes[len(h.Notes)-1])
			break rounds
		}
		for _, t := range c.tools {
			for _, size := range t.sizesFor(c.sizes) {
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
						if errors.Is(err, perftest.ErrNoClock) && try <= c.retries && ctx.Err() == nil {
							logf("round %d size %d: %s could not estimate the CPU frequency (inf/nan figures); running it again", round, size, writeLat)
							continue
						}
						if err == nil {
							smp.Perftest, err = figuresOf(rttsFromPerftest(raw.report.Samples, t.halved), c.warmup, t.halved)
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
							smp.Ours, err = figuresOf(r.rtts, c.warmup, t.halved)
						}
						if err == nil {
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
					round, c.rounds, t.name, size, figure(smp.Perftest, "p50"), figure(smp.Perftest, "p99"),
					figure(smp.Ours, "p50"), figure(smp.Ours, "p99"), ratio(smp.ratio("p50")), ratio(smp.ratio("p99")))
				samples = append(samples, smp)
				if ctx.Err() != nil {
					logf("interrupted")
					return 1
				}
			}
		}
	}

	sums := Summarize(samples, c.tools, c.sizes, DefaultTargets, defaultJudge)
	var table bytes.Buffer
	if err := Print(&table, h, sums); err != nil {
		logf("%v", err)
		return 1
	}
	save("compare.txt", table.Bytes())
	if _, err := stdout.Write(table.Bytes()); err != nil {
		logf("%v", err)
		return 1
	}
	if failed > 0 {
		logf("%d of %d runs (round, tool, size) failed; see the errors above", failed, len(samples))
		return 1
	}
	if c.strict {
		for _, s := range sums {
			for _, j := range s.Judgement {
				if j.Failed() {
					return 1
				}
			}
		}
	}
	return 0
}

// samplesDir returns the directory for one benchmark run's raw samples:
// under -out, kept; without -out, a temporary one that cleanup removes.
func (c *config) samplesDir(name string) (dir string, cleanup func(), err error) {
	if c.outDir != "" {
		dir = filepath.Join(c.outDir, name)
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	dir, err = os.MkdirTemp("", "rdmacompare-samples-")
	return dir, func() { os.RemoveAll(dir) }, err
}

// dropUnsupported asks each perftest program for its usage and leaves out
// the tools whose options it lacks: with -tools all, with a note for the
// report; a tool named in -tools is an error that says what to do.
func (c *config) dropUnsupported(ctx context.Context) error {
	if len(c.tools) == 0 {
		return nil
	}
	usage := map[string]string{}
	var keep []*tool
	for _, t := range c.tools {
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
		if !c.toolsAll {
			return fmt.Errorf("-tools %s: %s; install a perftest that has it, or leave %s out of -tools", t.name, why, t.name)
		}
		c.notes = append(c.notes, fmt.Sprintf("%s: not measured: %s", t.name, why))
	}
	c.tools = keep
	return nil
}

// resolveTools finds the perftest programs on PATH and checks the
// benchmark binary.
func (c *config) resolveTools() error {
	c.perftestPaths = map[string]string{}
	for _, t := range c.tools {
		p, err := exec.LookPath(t.perftest)
		if err != nil {
			return errNoPerftest(t.perftest)
		}
		c.perftestPaths[t.perftest] = p
	}
	fi, err := os.Stat(c.bench)
	if err != nil {
		return fmt.Errorf("-bench: %w (build it with go test -c -o bin/rdmabench.test .)", err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("-bench %s: not an executable file", c.bench)
	}
	return nil
}
