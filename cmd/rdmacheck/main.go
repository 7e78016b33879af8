// Command rdmacheck prints what a benchmark run would record about this
// host (its configuration lines) and warns about what distorts latency,
// each with what to do, without running a benchmark:
//
//	go run ./cmd/rdmacheck                  # the device and CPUs the benchmarks would use
//	go run ./cmd/rdmacheck -device mlx5_0 -cpus 6,7
//
// The device and CPUs come from -device and -cpus, else RDMABENCH_DEVICE
// and RDMABENCH_CPUS, else the benchmarks' defaults. Its output is in
// benchmark format: config lines, then warnings as "#" lines that
// benchstat skips. Exit status 0, or with -strict 3 when it warned.
//
// It times a clock read here, through the vDSO and as a system call, and
// warns when the read costs as much as a system call (whatever the
// clocksource's name). Unless -probe=false it also spends about a second timing a busy loop on
// the two CPUs alone and together (internal/cpuprobe): on hosts whose CPUs
// share a core or a hypervisor's time, the two polling threads slow each
// other, which no file in sysfs shows.
// Run it as root to read the PM QoS limit in force.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/cpuprobe"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
	"github.com/rdmabench/rdmabench/internal/target"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv)) }

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fl := flag.NewFlagSet("rdmacheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	device := fl.String("device", "", "RDMA device (default: $RDMABENCH_DEVICE, else the first with an active port)")
	cpus := fl.String("cpus", "", "measuring CPUs `A,B` (initiator, responder), A, or none (default: $RDMABENCH_CPUS, else the last two this process may use)")
	root := fl.String("root", "/", "root of the file system to read (a fake sysfs and /proc for tests)")
	strict := fl.Bool("strict", false, "exit with status 3 when there are warnings")
	probe := fl.Bool("probe", true, "time a busy loop on the CPUs alone and together (about 1 s) and warn when they slow each other")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmacheck [flags]\n\nPrints this host's benchmark configuration lines and warnings.\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "rdmacheck: unexpected argument %q (flags only; -h lists them)\n", fl.Arg(0))
		return 2
	}
	fsys := os.DirFS(*root)
	t, err := target.Resolve(fsys, *device, *cpus, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "rdmacheck: %v\n", err)
		return 2
	}
	dev, cpuDesc := t.Device, "unpinned"
	if dev == "" {
		dev = "none"
	}
	if len(t.CPUs) > 0 {
		cpuDesc = env.FormatCPUList(t.CPUs)
	}
	opts := hostinfo.Options{FS: fsys, Device: t.Device, CPUs: t.CPUs, Getenv: getenv}
	if *root == "/" {
		// The clock warning rests on timing the clock here; a fake root
		// has no clock to time.
		c := hostinfo.MeasureClockCost()
		opts.Clock = &c
	}
	r := hostinfo.Collect(opts)
	r.Lines = append([]hostinfo.Line{{Key: "rdma-device", Value: dev}, {Key: "rdmabench-cpus", Value: cpuDesc}}, r.Lines...)
	if *probe {
		if err := addProbe(&r, t.CPUs); err != nil {
			fmt.Fprintf(stderr, "rdmacheck: %v\n", err)
			return 1
		}
	}
	if err := r.Write(stdout); err != nil {
		fmt.Fprintf(stderr, "rdmacheck: %v\n", err)
		return 1
	}
	switch n := len(r.Warnings); {
	case n == 0:
		fmt.Fprintln(stdout, "# no warnings")
	case *strict:
		fmt.Fprintf(stdout, "# %d warnings\n", n)
		return 3
	default:
		fmt.Fprintf(stdout, "# %d warnings\n", n)
	}
	return 0
}

// addProbe probes the measuring CPUs and adds the cpu-contention note and,
// when they slow each other, its warning. Unpinned runs have no two CPUs
// to probe: the line says so.
func addProbe(r *hostinfo.Report, cpus []int) error {
	if len(cpus) < 2 {
		r.Notes = append(r.Notes, hostinfo.Line{Key: "cpu-contention", Value: "not probed (needs two measuring CPUs; see -cpus)"})
		return nil
	}
	res, err := cpuprobe.Probe(context.Background(), cpuprobe.Options{CPUs: cpus, From: "-cpus"})
	if err != nil {
		return err
	}
	r.Notes = append(r.Notes, res.Line())
	if w, ok := res.Warning(); ok {
		r.Warnings = append(r.Warnings, w)
	}
	return nil
}
