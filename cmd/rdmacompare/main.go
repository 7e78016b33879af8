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
// times. With -sched each round also shows what the scheduler did to
// perftest's client and to our process (migrations/preemptions, from
// /proc/PID/task/*/sched); off by default, since reading it perturbs the
// runs.
//
// Every raw output (both perftest sides, the benchmark, its samples) and
// the table go under -out, by default $RXEVM_OUT (which rxevm -out brings
// back to the host). -time-limit stops between rounds when the next would
// end too late, and judges the rounds done.
//
// Exit status (the same table as rdmaab's, kept stable): 0; 3 when a run
// failed; 2 for bad usage or a missing tool; with -strict, 1 when a target
// was missed and else 4 when a target is undecided (more -rounds).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/perftestcmp"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/rdmalat"
)

func parseFlags(args []string, stderr io.Writer) (*perftestcmp.Config, error) {
	c := &perftestcmp.Config{}
	fs := flag.NewFlagSet("rdmacompare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", "2,4096", "message `sizes` in bytes, comma-separated")
	toolList := fs.String("tools", "write", "perftest tests to compare, comma-separated: "+perftestcmp.ToolNames()+", or all")
	fs.StringVar(&c.Bench, "bench", "", "the rdmabench test `binary` (go test -c -o bin/rdmabench.test .); required")
	fs.IntVar(&c.Iters, "iters", 5000, "iterations per run, the same for both (ib_write_lat -n, -test.benchtime=Nx)")
	fs.IntVar(&c.Rounds, "rounds", perftestcmp.DefaultRounds, "rounds; each runs both sides back to back for every tool and size (at least 6: the fewest with a 95% interval of the median ratio)")
	cpuList := fs.String("cpus", "", "`A,B`: CPUs for both sides, the initiator (perftest's client) on A and the responder (its server) on B (default: the last two this process may use, as the benchmarks choose)")
	fs.BoolVar(&c.PinPerftest, "pin", true, "pin perftest to -cpus as the benchmark pins itself; -pin=false runs perftest unpinned (to measure what pinning does)")
	fs.DurationVar(&c.TimeLimit, "time-limit", 0, "start no round that would end after this `duration` (judged by the rounds so far) and judge the rounds done; 0: none")
	fs.IntVar(&c.Warmup, "warmup", 0, "drop the first `N` samples of every run, on both sides (0: keep all, as perftest does)")
	fs.StringVar(&c.Device, "device", os.Getenv(env.VarDevice), "RDMA `device` (default $RDMABENCH_DEVICE, else the one the benchmarks pick: the first with an ACTIVE port)")
	fs.IntVar(&c.GIDIndex, "gid-index", -1, "GID `index` for both (ib_write_lat -x, RDMABENCH_GID_INDEX); -1: the one the benchmark picks, as perftest scores them")
	fs.IntVar(&c.Inline, "inline", perftestcmp.InlineDefault, "largest inline message in `bytes` for both (ib_write_lat -I, RDMABENCH_INLINE); -1: perftest's default for each test on this device (0 on devices perftest does not recognise, such as rxe)")
	fs.DurationVar(&c.Timeout, "timeout", 2*time.Minute, "kill a run (a perftest pair or a benchmark) of -iters operations after this `duration`; a work run of more operations gets proportionally more")
	fs.StringVar(&c.ServerAddr, "server-addr", "127.0.0.1", "`address` the ib_write_lat client reaches its server at (perftest's TCP exchange only)")
	fs.IntVar(&c.Port, "port", 18515, "first TCP `port` for ib_write_lat; each pair takes the next free one")
	fs.StringVar(&c.OutDir, "out", os.Getenv("RXEVM_OUT"), "`dir`ectory for the raw outputs and the table (default $RXEVM_OUT; none when empty)")
	fs.StringVar(&c.PeerBin, "peer", "", "run our responder as a process of its own, this `rdmapeer` binary pinned to the responder's CPU (as perftest's server is), instead of a thread of the benchmark's process")
	fs.BoolVar(&c.Sched, "sched", false, "read both sides' scheduler statistics (migrations/preemptions) from /proc every 100 ms and show them per round; the reads perturb the runs they watch, so leave it off for figures")
	fs.BoolVar(&c.Strict, "strict", false, "exit with status 1 when a target is missed, 4 when one is undecided")
	fs.IntVar(&c.WorkIters, "work-iters", perftestcmp.DefaultWorkIters, "under rxevm -insns, after the rounds, run each side for `N` and 2N operations to count its instructions per operation (user and kernel, the verdict where time is emulation; docs/comparing.md); 0: no work runs")
	fs.StringVar(&c.WorkBench, "work-bench", "", "the rdmabench test `binary` built without markers (CGO_CFLAGS=-DRB_NO_MARKERS; make compare builds it): the work runs measure it as they measure perftest, to check the method against our markers")
	fs.Float64Var(&c.WorkTolerance, "work-tolerance", 0, "fail (exit status 3) when the method's user work figure of ours (-work-bench) differs from our markers' by more than this `fraction` (0.01: 1%); 0: not judged")
	fs.Float64Var(&c.WorkKernelTolerance, "work-kernel-tolerance", 0, "the same for the kernel's figure, kernel work (kernel-work-insns/op; 0.05 judges it at 5%); 0: not judged")
	fs.IntVar(&c.Retries, "retries", 2, "run ib_write_lat again up to `N` times when it could not estimate the CPU frequency (inf/nan figures)")
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
	if c.Bench == "" {
		return nil, errors.New("-bench is required: the rdmabench test binary (go test -c -o bin/rdmabench.test .)")
	}
	var err error
	c.ToolsAll = strings.TrimSpace(*toolList) == "all"
	if c.Tools, err = perftestcmp.ParseTools(*toolList); err != nil {
		return nil, fmt.Errorf("-tools: %w", err)
	}
	if c.Sizes, err = env.ParseSizes("-sizes", *sizes); err != nil {
		return nil, err
	}
	if c.Iters < 2 {
		return nil, fmt.Errorf("-iters %d: want at least 2 (perftest's samples are gaps between iterations)", c.Iters)
	}
	if c.WorkIters < 0 {
		return nil, fmt.Errorf("-work-iters %d: want 0 (no work runs) or more", c.WorkIters)
	}
	if c.WorkTolerance < 0 {
		return nil, fmt.Errorf("-work-tolerance %g: want a fraction such as 0.01, or 0 for no check", c.WorkTolerance)
	}
	if c.WorkKernelTolerance < 0 {
		return nil, fmt.Errorf("-work-kernel-tolerance %g: want a fraction such as 0.05, or 0 for no check", c.WorkKernelTolerance)
	}
	if c.Rounds < 1 {
		return nil, fmt.Errorf("-rounds %d: want at least 1", c.Rounds)
	}
	if c.Warmup < 0 || c.Warmup >= c.Iters-1 {
		return nil, fmt.Errorf("-warmup %d: want 0 up to fewer than -iters %d minus one (perftest measures iters-1 samples)", c.Warmup, c.Iters)
	}
	if c.CPUs, err = parseCPUs(*cpuList); err != nil {
		return nil, err
	}
	if c.Timeout <= 0 {
		return nil, fmt.Errorf("-timeout %s: want a positive duration", c.Timeout)
	}
	if c.Port < 1 || c.Port > 65535 {
		return nil, fmt.Errorf("-port %d: want 1..65535", c.Port)
	}
	return c, nil
}

// parseCPUs reads -cpus "2,3" (env.ParseCPUs) and checks them against the
// CPUs this process may use (env.CheckCPUs), before any round starts
// perftest or the benchmark there; "" picks the benchmarks' default pair.
func parseCPUs(s string) ([2]int, error) {
	cpus, none, err := env.ParseCPUs("-cpus", s)
	switch {
	case err != nil:
		return [2]int{}, err
	case cpus == nil && !none:
		pair, err := rdmalat.DefaultCPUs()
		if err != nil {
			return [2]int{}, err
		}
		cpus = make([]int, 2)
		for i, c := range pair {
			cpus[i], _ = c.ID() // the default pair always pins
		}
	case len(cpus) != 2:
		return [2]int{}, fmt.Errorf("%q: want two CPU numbers, initiator and responder, such as 2,3", s)
	}
	if err := env.CheckCPUs("-cpus", cpus); err != nil {
		return [2]int{}, err
	}
	return [2]int{cpus[0], cpus[1]}, nil
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
	if err := resolveDefaults(c); err != nil {
		fmt.Fprintf(os.Stderr, "rdmacompare: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(perftestcmp.Run(ctx, c, os.Stdout, os.Stderr))
}

// resolveDefaults fills the device, GID index and inline family the
// benchmark would pick on this host, by opening an endpoint as it does:
// perftest is then given the same -d and -x, and each test's inline size
// from perftest's own table for this device.
func resolveDefaults(c *perftestcmp.Config) error {
	gid := rdmalat.GIDBest
	if c.GIDIndex >= 0 {
		gid = c.GIDIndex
		if gid == 0 {
			gid = rdmalat.GIDIndex0
		}
	}
	ep, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: c.Device, GIDIndex: gid, MaxSize: 64})
	if err != nil {
		return fmt.Errorf("choosing the device and GID as the benchmark does (-device, -gid-index): %w", err)
	}
	defer ep.Close()
	d := ep.Device()
	c.Device, c.GIDIndex = d.Name, d.GIDIndex
	c.InlineFamily = spec.DeviceFamily(d.VendorID, d.PartID)
	return nil
}
