package main

import (
	"errors"
	"flag"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rdmabench/rdmabench/internal/fleet/agent"
	"github.com/rdmabench/rdmabench/internal/fleet/jobreport"
)

// pairFlags registers the flags of agent.Options, shared by rdmafleet run
// (which passes them on to its agents, args) and rdmafleet agent.
func pairFlags(fs *flag.FlagSet, o *agent.Options, binDir string) {
	fs.StringVar(&o.Bench, "bench", filepath.Join(binDir, "rdmabench.test"), "the benchmark `binary` (go test -c -o rdmabench.test . in rdmabench)")
	fs.StringVar(&o.Peer, "peer", filepath.Join(binDir, "rdmapeer"), "the rdmapeer `binary` (go build ./cmd/rdmapeer)")
	fs.StringVar(&o.Benchmark, "benchmark", "^BenchmarkRDMAWrite$", "`regexp` of the benchmarks to run (-test.bench)")
	fs.StringVar(&o.Benchtime, "benchtime", "1000x", "round trips per result (-test.benchtime)")
	fs.IntVar(&o.Count, "count", 6, "results per pair and size (-test.count); benchstat needs 6 for a 95% interval")
	fs.IntVar(&o.PortBase, "port-base", 18600, "first TCP `port`: a pair's rdmapeer listens on port-base+2i, its agents talk on the next one")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "deadline of one pair, from the start of the agents to the benchmark's end")
	fs.StringVar(&o.Rails, "rails", "", "the `devices` of each node to measure rail by rail, e.g. mlx5_0,mlx5_1, or all (every active one): rdmapeer serves them all and each rail of the benchmark's node meets the peer's device of the same name; results are named /rail=DEV and the report has a matrix per rail (default: $RDMABENCH_DEVICE, one device or rails)")
	fs.StringVar(&o.Hosts, "hosts", "", "`file` in /etc/hosts format giving the address of each node name (default: node names resolve)")
}

// pairArgs returns the flags that give an agent the same options.
func pairArgs(o agent.Options) []string {
	a := []string{
		"-bench", o.Bench, "-peer", o.Peer, "-benchmark", o.Benchmark, "-benchtime", o.Benchtime,
		"-count", strconv.Itoa(o.Count), "-port-base", strconv.Itoa(o.PortBase), "-timeout", o.Timeout.String(),
	}
	if o.Hosts != "" {
		a = append(a, "-hosts", o.Hosts)
	}
	if o.Rails != "" {
		a = append(a, "-rails", o.Rails)
	}
	return a
}

// reportFlags registers the flags of jobreport.Options.
func reportFlags(fs *flag.FlagSet, o *jobreport.Options) {
	*o = jobreport.DefaultOptions
	fs.StringVar(&o.Metric, "metric", o.Metric, "the `unit` outliers and the heat map are judged on, as benchstat names it (p50-sec, p99-sec, min-sec, sec/op)")
	fs.StringVar(&o.Bench, "judge", "", "the `benchmark` judged, without the pair, e.g. RDMAWrite/size=2, judged on every rail, or RDMAWrite/rail=mlx5_1/size=2, that rail alone (default the first in the results, on every rail)")
	fs.Float64Var(&o.Thresholds.MinRatio, "min-ratio", o.Thresholds.MinRatio, "flag pairs slower than this `factor` times the fastest pair")
	fs.Float64Var(&o.Thresholds.MADs, "mads", o.Thresholds.MADs, "flag pairs slower than the median plus this many median absolute deviations")
	fs.Func("max", "absolute `limits` on every cell's median, as RDMABENCH_MAX writes them (p99=20us,max=1ms); cells over are listed in outliers.txt and the exit status is 3", func(v string) (err error) {
		o.Limits, err = jobreport.ParseLimits(v)
		return err
	})
}

// exitReport is the exit status of a written report: 3 when cells are
// over -max, 1 for any other error.
func exitReport(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, jobreport.ErrOverLimits):
		return 3
	}
	return 1
}
