// Command rdmacompare sets perftest's latency tests and the rdmabench
// benchmarks that measure the same thing side by side on one RDMA device,
// interleaved, and says how far apart they are.
//
//	rdmacompare -bench bin/rdmabench.test [-tools write,read] [-sizes 2,4096] [-iters 5000] [-rounds 6]
//
// make compare builds the benchmark binary and runs rdmacompare inside one
// boot of the soft-RoCE VM (cmd/rxevm), where perftest is installed. Under
// emulation absolute figures mean little; runs side by side in one boot,
// interleaved, make the ratios meaningful.
//
// -tools picks rows of a table (tools.go): write (ib_write_lat against
// BenchmarkRDMAWrite, the default), read (ib_read_lat, BenchmarkRDMARead),
// send and send-ud (ib_send_lat -c RC/UD, BenchmarkRDMASend with
// RDMABENCH_TRANSPORT), atomic (ib_atomic_lat -A FETCH_AND_ADD, 8 bytes,
// BenchmarkRDMAAtomic/op=fetch_add), write-imm (ib_write_lat
// --write_with_imm, BenchmarkRDMAWriteImm), or all. For each round, tool
// and size, in turn, it runs
//
//   - the perftest test as a server and as a client on the same device
//     (-d DEVICE -x GID-INDEX -s SIZE -n ITERS -p PORT -F and the row's
//     options), the client connecting to -server-addr once the server
//     listens, and reads the client's result table;
//   - the benchmark binary: -test.bench=^Benchmark<name>$
//     -test.benchtime=ITERSx -test.count=1 with RDMABENCH_SIZES=SIZE,
//     RDMABENCH_DEVICE and RDMABENCH_GID_INDEX set, and reads its result
//     with golang.org/x/perf/benchfmt.
//
// Odd rounds run perftest first, even rounds ours, so that neither side
// always profits from a warmer machine. Every run is killed after -timeout.
// When perftest's CPU frequency estimate fails (under load it prints
// inf/nan figures) that run is repeated, up to -retries times.
//
// It prints, per tool and size, perftest's t_min, t_typical, t_avg, 99%,
// 99.9% and t_max next to our min, p50, mean, p99, p99.9 and max as
// medians over the rounds with their spread, the ratio ours/perftest of
// the medians, each round's figures, and a verdict: the p50 ratio against
// 1±5% and the p99 ratio against 1±10%, a miss only when benchmath's
// Mann-Whitney U test over the rounds finds the two sides differ (hence 6
// rounds by default, the fewest where it can). Figures are in
// microseconds: one-way for write and send (perftest halves the round
// trip; so do the benchmarks), the whole operation for read and atomic.
//
// Every raw output (both perftest sides, the benchmark) and the table go
// under -out, by default $RXEVM_OUT (which rxevm -out brings back to the
// host). The exit status is 1 when a run failed, or with -strict when a
// target was missed; 2 for bad usage or a missing tool.
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
	fs.IntVar(&c.rounds, "rounds", 6, "rounds; each runs both for every tool and size (6 or more: the fewest for which the U test and a 95% interval of the median work)")
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
	if c.timeout <= 0 {
		return nil, fmt.Errorf("-timeout %s: want a positive duration", c.timeout)
	}
	if c.port < 1 || c.port > 65535 {
		return nil, fmt.Errorf("-port %d: want 1..65535", c.port)
	}
	return c, nil
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
		h       = Header{Device: c.device, GIDIndex: c.gidIndex, Iters: c.iters, Rounds: c.rounds, Tools: c.tools, Notes: c.notes}
		failed  int
		port    = c.port
		mtu     int // the path MTU our side reported, once it has
		tooBig  = map[string]bool{}
	)
	for round := 1; round <= c.rounds; round++ {
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
				writeLat := t.perftest
				var errs []error
				runPT := func() {
					for try := 1; ; try++ {
						port = freePort(port)
						row, raw, err := runPerftest(ctx, c, t, size, port)
						port++
						tag := fmt.Sprintf("round%d-%ssize%d-perftest", round, t.tag(), size)
						if try > 1 {
							tag += fmt.Sprintf("-try%d", try)
						}
						save(tag+"-server.txt", raw.server)
						save(tag+"-client.txt", raw.client)
						if errors.Is(err, perftest.ErrNoClock) && try <= c.retries && ctx.Err() == nil {
							logf("round %d size %d: %s could not estimate the CPU frequency (inf/nan figures); running it again", round, size, writeLat)
							continue
						}
						if err != nil {
							errs = append(errs, err)
							return
						}
						smp.Perftest = perftestFigures(row)
						if h.PerftestSetup == nil {
							h.PerftestSetup = setupOf(raw.report.Info, perftestSetupKeys)
						}
						return
					}
				}
				runOurs := func() {
					res, out, err := runBench(ctx, c, t, size)
					save(fmt.Sprintf("round%d-%ssize%d-bench.txt", round, t.tag(), size), out)
					if err != nil {
						errs = append(errs, err)
						return
					}
					smp.Ours = res.Figures
					if v, err := strconv.Atoi(res.Config["rdma-mtu"]); err == nil && mtu == 0 {
						mtu = v
					}
					if h.OursSetup == nil {
						h.OursSetup = setupOf(res.Config, oursSetupKeys)
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
				logf("round %d/%d %s size %d: perftest t_typical %s 99%% %s | ours p50 %s p99 %s",
					round, c.rounds, t.name, size, figure(smp.Perftest, "p50"), figure(smp.Perftest, "p99"),
					figure(smp.Ours, "p50"), figure(smp.Ours, "p99"))
				samples = append(samples, smp)
				if ctx.Err() != nil {
					logf("interrupted")
					return 1
				}
			}
		}
	}

	sums := Summarize(samples, c.tools, c.sizes, DefaultTargets)
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
