package jobdir

import (
	"bytes"
	"fmt"
	"strconv"

	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/benchfile"
	"github.com/rdmabench/rdmabench/internal/cmdout"
	"github.com/rdmabench/rdmabench/internal/fleet"
)

// RunConfig is the configuration that labels every result of a job, the
// same in every pair file, so that benchstat puts all pairs in one table.
// The benchmark's own lines (firmware, kernel, CPUs of each node) stay in
// the raw output, where they may differ from node to node.
func RunConfig(plan *fleet.Plan, getenv func(string) string) [][2]string {
	device := getenv(env.VarDevice)
	if device == "" {
		device = "default"
	}
	job := getenv("SLURM_JOB_ID")
	if job == "" {
		job = "none"
	}
	cfg := [][2]string{
		{"rdmabench-mode", "fleet"},
		{"rdma-device", device},
		{"rdmabench-fleet-pattern", plan.Pattern},
		{"rdmabench-fleet-nodes", strconv.Itoa(len(plan.Nodes))},
		{"slurm-job-id", job},
	}
	// The benchmark's own rdmabench-load line is not kept (keptConfig):
	// the job's is, so that the matrix and every pair file say the
	// latency was taken under load. rdmafleet run refused a bad value.
	if n, err := LoadSize(getenv); err == nil && n > 0 {
		cfg = append(cfg, [2]string{"rdmabench-load", strconv.Itoa(n)})
	}
	return cfg
}

// LoadSize reads RDMABENCH_LOAD through getenv with the benchmark's own
// parser: the message size of the load stream each pair's benchmark runs
// beside its latency (a load session on dst's rdmapeer), 0 for none.
func LoadSize(getenv func(string) string) (int, error) {
	c, err := env.LoadFrom(func(k string) string {
		if k == env.VarLoad {
			return getenv(k)
		}
		return ""
	})
	return c.Load, err
}

// ReasonLines is how many lines of a program's output a failure's reason
// quotes.
const ReasonLines = 6

// keptConfig are the benchmark's configuration lines kept in pair files:
// the same on every node of one build.
var keptConfig = []string{"goos", "goarch", "pkg"}

// RewriteResults turns the benchmark's output into a pair file: every
// result's name gets /src=SRC/dst=DST after its base name
// (BenchmarkRDMAWrite/src=n1/dst=n2/size=2-4), and the configuration
// lines are the job's. It fails when the output has no result.
func RewriteResults(out []byte, name string, s fleet.Step, config [][2]string) ([]byte, error) {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	// Lines that do not parse are the test's logs: skipped.
	info, err := benchfile.Read(bytes.NewReader(out), name, benchfile.Skip, func(res *benchfmt.Result) error {
		base, parts := res.Name.Parts()
		name := append([]byte(nil), base...)
		name = append(name, "/src="+s.Src+"/dst="+s.Dst...)
		for _, p := range parts {
			name = append(name, p...)
		}
		out := &benchfmt.Result{Name: name, Iters: res.Iters, Values: res.Values}
		for _, k := range keptConfig {
			if v := res.GetConfig(k); v != "" {
				out.Config = append(out.Config, benchfmt.Config{Key: k, Value: []byte(v), File: true})
			}
		}
		for _, kv := range config {
			out.Config = append(out.Config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
		}
		return w.Write(out)
	})
	if err != nil {
		return nil, err
	}
	if info.Results == 0 {
		return nil, fmt.Errorf("no benchmark results in the output%s", cmdout.OneLine(out, ReasonLines))
	}
	return buf.Bytes(), nil
}
