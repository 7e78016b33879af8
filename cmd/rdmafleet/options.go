package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// pairOptions say how one pair is measured; rdmafleet run passes them on
// to every agent.
type pairOptions struct {
	bench     string // the benchmark binary (go test -c -o rdmabench.test .)
	peer      string // rdmapeer
	benchmark string // -test.bench
	benchtime string // -test.benchtime
	count     int    // -test.count
	portBase  int
	timeout   time.Duration
	hosts     string // /etc/hosts-format file: node name -> address
}

// portSpan bounds the ports a job uses: two per pair, at most this many
// pairs apart before they are reused.
const portSpan = 500

func (o *pairOptions) register(fs *flag.FlagSet, binDir string) {
	fs.StringVar(&o.bench, "bench", filepath.Join(binDir, "rdmabench.test"), "the benchmark `binary` (go test -c -o rdmabench.test . in rdmabench)")
	fs.StringVar(&o.peer, "peer", filepath.Join(binDir, "rdmapeer"), "the rdmapeer `binary` (go build ./cmd/rdmapeer)")
	fs.StringVar(&o.benchmark, "benchmark", "^BenchmarkRDMAWrite$", "`regexp` of the benchmarks to run (-test.bench)")
	fs.StringVar(&o.benchtime, "benchtime", "1000x", "round trips per result (-test.benchtime)")
	fs.IntVar(&o.count, "count", 6, "results per pair and size (-test.count); benchstat needs 6 for a 95% interval")
	fs.IntVar(&o.portBase, "port-base", 18600, "first TCP `port`: a pair's rdmapeer listens on port-base+2i, its agents talk on the next one")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "deadline of one pair, from the start of the agents to the benchmark's end")
	fs.StringVar(&o.hosts, "hosts", "", "`file` in /etc/hosts format giving the address of each node name (default: node names resolve)")
}

func (o *pairOptions) check() error {
	for _, bin := range []struct{ flag, path string }{{"-bench", o.bench}, {"-peer", o.peer}} {
		st, err := os.Stat(bin.path)
		if err != nil {
			return fmt.Errorf("%s %s: %w (build it, or name it with %s)", bin.flag, bin.path, errors.Unwrap(err), bin.flag)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s %s: not an executable file", bin.flag, bin.path)
		}
	}
	if o.count < 1 {
		return fmt.Errorf("-count %d: want at least 1", o.count)
	}
	if o.portBase < 1024 || o.portBase+2*portSpan > 65535 {
		return fmt.Errorf("-port-base %d: want 1024 to %d", o.portBase, 65535-2*portSpan)
	}
	if o.timeout < time.Second {
		return fmt.Errorf("-timeout %v: want at least 1s", o.timeout)
	}
	return nil
}

// args returns the flags that give an agent the same options.
func (o *pairOptions) args() []string {
	a := []string{
		"-bench", o.bench, "-peer", o.peer, "-benchmark", o.benchmark, "-benchtime", o.benchtime,
		"-count", strconv.Itoa(o.count), "-port-base", strconv.Itoa(o.portBase), "-timeout", o.timeout.String(),
	}
	if o.hosts != "" {
		a = append(a, "-hosts", o.hosts)
	}
	return a
}

// ports returns the rdmapeer port and the agents' control port of the
// index-th pair of a plan.
func (o *pairOptions) ports(index int) (peer, control int) {
	p := o.portBase + 2*(index%portSpan)
	return p, p + 1
}
