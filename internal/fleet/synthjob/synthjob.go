// Package synthjob writes a synthetic fleet job directory: an all-pairs
// plan of n nodes and one pair file per step in the form rdmafleet's
// agents write (jobdir.RewriteResults), with one slow node. It exists to
// measure `rdmafleet report` at sizes no test bed has (1000 nodes is
// 499,500 pair files): the report's benchmark and `rdmafleet synth` use it.
package synthjob

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
)

// Options shape the synthetic job.
type Options struct {
	Nodes int // how many nodes: n0001, n0002, ...
	Count int // results per size in each pair file (go test -count)
	Seed  uint64
	// PairFilesOnly leaves out the round files rdmafleet run writes after
	// each round: a job of an older rdmafleet.
	PairFilesOnly bool
}

// DefaultOptions are a 1000-node all-pairs job, 6 results per size.
var DefaultOptions = Options{Nodes: 1000, Count: 6, Seed: 1}

// Sizes are the message sizes of each pair file's benchmark.
var Sizes = []int{2, 4096}

// SlowNode is the node whose pairs are slower (by SlowBy seconds).
const (
	SlowNode = "n0004"
	SlowBy   = 100e-6
)

// Write writes plan.txt, pairs/ and rounds/ into dir (created), as
// rdmafleet run leaves them, with as many writers as GOMAXPROCS. It stops
// when ctx is done.
func Write(ctx context.Context, dir string, o Options) (*fleet.Plan, error) {
	if o.Nodes < 2 || o.Count < 1 {
		return nil, fmt.Errorf("synthjob: %d nodes, count %d: want at least 2 nodes and 1 result", o.Nodes, o.Count)
	}
	nodes := make([]string, o.Nodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n%04d", i+1)
	}
	plan, err := fleet.AllPairs(nodes)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, jobdir.PairsDir), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, jobdir.PlanFile))
	if err != nil {
		return nil, err
	}
	if err := plan.Write(f); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	steps := plan.Steps()
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var buf []byte
			for i := w; i < len(steps); i += workers {
				if errs[w] = ctx.Err(); errs[w] != nil {
					return
				}
				s := steps[i]
				buf = PairFile(buf[:0], s, o, len(nodes))
				if errs[w] = os.WriteFile(jobdir.ResultPath(dir, s), buf, 0o644); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if o.PairFilesOnly {
		return plan, nil
	}
	for start := 0; start < len(steps); {
		end := start + 1
		for end < len(steps) && steps[end].Round == steps[start].Round {
			end++
		}
		if err := jobdir.WriteRound(ctx, dir, steps[start:end]); err != nil {
			return nil, err
		}
		start = end
	}
	return plan, nil
}

// PairFile appends the pair file of step s to b: the job's configuration
// lines, then Count results per size, values drawn from a seed of the
// step's index (the same job every time).
func PairFile(b []byte, s fleet.Step, o Options, nodes int) []byte {
	rng := rand.New(rand.NewPCG(o.Seed, uint64(s.Index)))
	b = append(b, "goos: linux\ngoarch: amd64\npkg: github.com/rdmabench/rdmabench\n"...)
	b = append(b, "rdmabench-mode: fleet\nrdma-device: rxe0\nrdmabench-fleet-pattern: all-pairs\n"...)
	b = append(b, "rdmabench-fleet-nodes: "...)
	b = strconv.AppendInt(b, int64(nodes), 10)
	b = append(b, "\nslurm-job-id: 17\n"...)
	slow := 0.0
	if s.Src == SlowNode || s.Dst == SlowNode {
		slow = SlowBy
	}
	for range o.Count {
		for _, size := range Sizes {
			base := 12e-6 + float64(size)*14e-9 + slow
			p50 := base * (1 + 0.05*rng.Float64())
			b = append(b, "BenchmarkRDMAWrite/src="+s.Src+"/dst="+s.Dst+"/size="...)
			b = strconv.AppendInt(b, int64(size), 10)
			b = append(b, "-4 5000 "...)
			for _, v := range []struct {
				sec  float64
				unit string
			}{{p50 * 1.03, "ns/op"}, {p50 * 15, "max-ns"}, {p50 * 0.78, "min-ns"}, {p50, "p50-ns"}, {p50 * 3.2, "p99-ns"}} {
				b = strconv.AppendInt(b, int64(v.sec*1e9), 10)
				b = append(b, ' ')
				b = append(b, v.unit...)
				b = append(b, ' ')
			}
			b = append(b, "0 B/op 0 allocs/op\n"...)
		}
	}
	return b
}
