package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/fleet"
)

// The job directory's layout: one file per pair and round.
const (
	pairsDir = "pairs" // benchfmt results (.txt) or a failure (.failed)
	rawDir   = "raw"   // the benchmark's and rdmapeer's own output
	planFile = "plan.txt"
)

// pairBase names a step's files: round01-n1-n2.
func pairBase(s fleet.Step) string {
	return fmt.Sprintf("round%02d-%s-%s", s.Round, s.Src, s.Dst)
}

func resultPath(dir string, s fleet.Step) string {
	return filepath.Join(dir, pairsDir, pairBase(s)+".txt")
}

func failedPath(dir string, s fleet.Step) string {
	return filepath.Join(dir, pairsDir, pairBase(s)+".failed")
}

func rawPath(dir string, s fleet.Step, what string) string {
	return filepath.Join(dir, rawDir, pairBase(s)+"."+what)
}

// writeAtomic writes a file under a temporary name and renames it, so
// that a reader on the shared filesystem never sees half of it. It is
// readable by all (0644), like every other file of the job directory.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Chmod(0o644); err == nil {
		err = cerr
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// recordFailed writes the step's failure file, unless its result is
// already there (the agents of both ends may both try).
func recordFailed(dir string, s fleet.Step, reason string) error {
	if _, err := os.Stat(resultPath(dir, s)); err == nil {
		return nil
	}
	reason = strings.Join(strings.Fields(reason), " ")
	text := fmt.Sprintf("round: %d\nsrc: %s\ndst: %s\nreason: %s\n", s.Round, s.Src, s.Dst, reason)
	return writeAtomic(failedPath(dir, s), []byte(text))
}

// readFailed returns the reason in a failure file.
func readFailed(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if r, ok := strings.CutPrefix(line, "reason: "); ok {
			return r, nil
		}
	}
	return "", fmt.Errorf("%s: no \"reason:\" line", path)
}

// runConfig is the configuration that labels every result of a job, the
// same in every pair file, so that benchstat puts all pairs in one table.
// The benchmark's own lines (firmware, kernel, CPUs of each node) stay in
// the raw output, where they may differ from node to node.
func runConfig(plan *fleet.Plan, getenv func(string) string) [][2]string {
	device := getenv(env.VarDevice)
	if device == "" {
		device = "default"
	}
	job := getenv("SLURM_JOB_ID")
	if job == "" {
		job = "none"
	}
	return [][2]string{
		{"rdmabench-mode", "fleet"},
		{"rdma-device", device},
		{"rdmabench-fleet-pattern", plan.Pattern},
		{"rdmabench-fleet-nodes", strconv.Itoa(len(plan.Nodes))},
		{"slurm-job-id", job},
	}
}

// keptConfig are the benchmark's configuration lines kept in pair files:
// the same on every node of one build.
var keptConfig = []string{"goos", "goarch", "pkg"}

// rewriteResults turns the benchmark's output into a pair file: every
// result's name gets /src=SRC/dst=DST after its base name
// (BenchmarkRDMAWrite/src=n1/dst=n2/size=2-4), and the configuration
// lines are the job's. It fails when the output has no result.
func rewriteResults(out []byte, name string, s fleet.Step, config [][2]string) ([]byte, error) {
	rd := benchfmt.NewReader(bytes.NewReader(out), name)
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	n := 0
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue // syntax errors: lines that are not results (test logs)
		}
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
		if err := w.Write(out); err != nil {
			return nil, err
		}
		n++
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("no benchmark results in the output%s", tailOf(out))
	}
	return buf.Bytes(), nil
}

// tailOf returns the last lines of a program's output for an error, or "".
func tailOf(out []byte) string {
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return ""
	}
	lines := bytes.Split(out, []byte("\n"))
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return "; output ends: " + string(bytes.Join(lines, []byte(" | ")))
}
